// Placeholder until the dev-server harness lands (starts nothing yet).
export default function setup(): void {}
