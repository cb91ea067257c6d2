/** Text of the line a worker process logs once it polls; daemons and test harnesses wait for it. */
export const WORKER_READY_TEXT = 'gpuprov worker: polling task queue';
