"""RunPod: the `runpod` SDK speaks GraphQL only (podFindAndDeployOnDemand), our adapter the REST v2
API, so no request is comparable on the wire. What the SDK can check: the pod our create asked for
(image, container disk, GPU, count, cloud, data centre, ports, env) builds the SDK's deploy
mutation, with our `image` as its `imageName` and our `disk` (an integer of GB) as its
`containerDiskInGb`."""
from runpod.api.mutations.pods import generate_pod_deployment_mutation

from _driver import Driver, need

d = Driver("runpod")
b = d.input["ours"]


def deploy():
    need(isinstance(b["disk"], int) and not isinstance(b["disk"], bool), "disk: an integer of GB")
    m = generate_pod_deployment_mutation(
        name=b["name"], image_name=b["image"], gpu_type_id=b["gpu"]["id"], gpu_count=b["gpu"]["count"], cloud_type=b["cloud"],
        data_center_id=b["dataCenterIds"][0], container_disk_in_gb=b["disk"], ports=",".join(b["ports"]), env=b["env"],
        start_ssh=b["startSsh"])
    need(f'imageName: "{b["image"]}"' in m, "imageName is our image")
    need(f"containerDiskInGb: {b['disk']}" in m, "containerDiskInGb is our disk")
    return True


d.call("create", deploy)
d.done()
