"""Nebius through the official `nebius` SDK (async gRPC clients), pointed at our gRPC fixture
(insecure, one address for every service), authenticated by the SDK's own service-account flow
(credentials file -> signed JWT -> TokenExchangeService.Exchange -> Bearer token). Makes every RPC our
adapter makes, with requests built the way the adapter builds them (see src/providers/nebius), for a
regular VM and for a preemptible (spot) one: the platform's allowed_for_preemptibles, the spot
estimate, the preemptible create, and the preemptible instance listed back.
The SDK decodes each answer with its own descriptors (which the proto check matched to ours).
"""
import asyncio

from _driver import Driver, need
from nebius.base.options import INSECURE
from nebius.base.protos.dynamic import REGISTRY
from nebius.base.resolver import Constant
from nebius.sdk import SDK
from nebius.aio.service_error import RequestError
from nebius.api.nebius.capacity.v1 import CapacityBlockGroupServiceClient, ListCapacityBlockGroupsRequest
from nebius.api.nebius.billing.v1 import (CalculatorServiceClient, EstimateBatchRequest, FilterAggregationUnit,
                                          ResourceSpec)
from nebius.api.nebius.common.v1 import GetByNameRequest, ResourceMetadata
from nebius.api.nebius.compute.v1 import (AttachedDiskSpec, CreateDiskRequest, CreateInstanceRequest, DeleteDiskRequest,
                                          DeleteInstanceRequest, DiskServiceClient, DiskSpec, ExistingDisk, FollowsSpotPriceSpec,
                                          InstanceRecoveryPolicy, InstanceServiceClient, ListDisksRequest,
                                          InstanceSpec, InstanceStatus, IPAddress, ListInstancesRequest, ListPlatformsRequest,
                                          NetworkInterfaceSpec, PlatformServiceClient, PreemptibleSpec, PublicIPAddress,
                                          ResourcesSpec, SourceImageFamily)
from nebius.api.nebius.vpc.v1 import ListSubnetsRequest, SubnetServiceClient

d = Driver("nebius")
addr = d.url
project = d.cred["project"]
public = f"project-{project[len('project-'):len('project-') + 3]}public-images"
NAME = "gpuprov-contract"


async def call(name, coro_fn):
    """d.call for coroutines: the SDK's clients are async."""
    holder = {}

    async def run():
        holder["v"] = await coro_fn()

    try:
        await run()
    except Exception as e:  # noqa: BLE001 - reported through d.call below
        err = e
        d.call(name, lambda: (_ for _ in ()).throw(err))
        return None
    d.call(name, lambda: holder["v"])
    return holder["v"]


async def not_found(coro):
    try:
        return await coro
    except RequestError as e:
        need("NOT_FOUND" in str(e.status.code) or "not found" in str(e).lower(), f"NotFound, got {e}")
        return None


def preemptible(create):
    """The same create, for a preemptible VM as the adapter asks for one (src/providers/nebius/map.ts PREEMPTIBLE)."""
    spot = CreateInstanceRequest.FromString(create.SerializeToString())
    spot.metadata.name = NAME + "-spot"
    spot.spec.preemptible = PreemptibleSpec(on_preemption=PreemptibleSpec.PreemptionPolicy.STOP)
    spot.spec.follows_spot_price = FollowsSpotPriceSpec()
    spot.spec.recovery_policy = InstanceRecoveryPolicy.FAIL
    return spot


async def main():
    sdk = SDK(resolver=Constant(addr), address_options={addr: [(INSECURE, True)]}, credentials_file_name=d.cred["credentials_file"],
              domain=addr, user_agent_prefix="gpuprov-contract")
    try:
        platforms = await call("PlatformService.List", lambda: PlatformServiceClient(sdk).list(ListPlatformsRequest(parent_id=public, page_size=100)))
        plat = platforms.items[0] if platforms and platforms.items else None
        subnets = await call("SubnetService.List", lambda: SubnetServiceClient(sdk).list(ListSubnetsRequest(parent_id=project, page_size=100)))
        subnet = subnets.items[0].metadata.id if subnets and subnets.items else None

        async def groups():
            out = await CapacityBlockGroupServiceClient(sdk).list(ListCapacityBlockGroupsRequest(parent_id=project, page_size=100))
            need(any(g.status.resource_affinity.compute_v1.platform and g.status.current_limit > 0 for g in out.items),
                 "no capacity block group with a platform and a limit decoded")
            return out
        await call("CapacityBlockGroupService.List", groups)
        if not (plat and subnet):
            return
        preset = plat.spec.presets[0].name
        need(plat.status.allowed_for_preemptibles, f"{plat.metadata.name}: allowed_for_preemptibles not decoded true")
        create = CreateInstanceRequest(
            metadata=ResourceMetadata(parent_id=project, name=NAME, labels={"gpuprov-vm-name": "contract"}),
            spec=InstanceSpec(resources=ResourcesSpec(platform=plat.metadata.name, preset=preset),
                              network_interfaces=[NetworkInterfaceSpec(name="eth0", subnet_id=subnet, ip_address=IPAddress(),
                                                                       public_ip_address=PublicIPAddress())],
                              cloud_init_user_data="#cloud-config\n"))
        spot = preemptible(create)

        def estimate(req):
            return EstimateBatchRequest(resource_specs=[ResourceSpec(spec=REGISTRY.pack_any(req))], currency="usd",
                                        filter_aggregation_unit=FilterAggregationUnit(
                                            filter_aggregation_unit_values=[FilterAggregationUnit.FilterAggregationUnitValue.FILTER_AGGREGATION_UNIT_HOUR]))

        calculator = CalculatorServiceClient(sdk)
        regular = await call("CalculatorService.EstimateBatch", lambda: calculator.estimate_batch(estimate(create)))

        async def spot_estimate():
            """The spot price is the preemptible spec's estimate: below the regular one."""
            r = await calculator.estimate_batch(estimate(spot))
            need(float(r.resource_costs[0].general.total.cost) < float(regular.resource_costs[0].general.total.cost), f"spot {r} not below {regular}")
            return r

        await call("CalculatorService.EstimateBatch", spot_estimate)
        disks = DiskServiceClient(sdk)
        await call("DiskService.GetByName", lambda: not_found(disks.get_by_name(GetByNameRequest(parent_id=project, name=NAME + "-boot"))))
        disk_op = await call("DiskService.Create", lambda: disks.create(CreateDiskRequest(
            metadata=ResourceMetadata(parent_id=project, name=NAME + "-boot"),
            spec=DiskSpec(size_gibibytes=50, type=DiskSpec.DiskType.NETWORK_SSD,
                          source_image_family=SourceImageFamily(image_family="ubuntu22.04-cuda12")))))
        if not disk_op:
            return
        await call("OperationService.Get", lambda: disk_op.wait(interval=0.05))

        async def listed():
            """Every page of the project's disks, as the adapter's sweep lists them: the new disk is among them."""
            ids, token = [], ""
            for _ in range(10):
                page = await disks.list(ListDisksRequest(parent_id=project, page_size=100, page_token=token))
                ids += [x.metadata.id for x in page.items]
                token = page.next_page_token
                if not token:
                    break
            need(disk_op.resource_id in ids, f"disk {disk_op.resource_id} not listed in {ids}")
            return ids

        await call("DiskService.List", listed)
        create.spec.boot_disk = AttachedDiskSpec(attach_mode=AttachedDiskSpec.AttachMode.READ_WRITE,
                                                 existing_disk=ExistingDisk(id=disk_op.resource_id))
        instances = InstanceServiceClient(sdk)
        op = await call("InstanceService.Create", lambda: instances.create(create))
        if not op:
            return

        async def running():
            for _ in range(6):
                page = await instances.list(ListInstancesRequest(parent_id=project, page_size=100))
                mine = [i for i in page.items if i.metadata.id == op.resource_id]
                if mine and mine[0].status.state == InstanceStatus.InstanceState.RUNNING:
                    return mine
            raise AssertionError("never RUNNING after 6 lists")

        await call("InstanceService.List", running)
        await call("InstanceService.GetByName", lambda: instances.get_by_name(GetByNameRequest(parent_id=project, name=NAME)))
        await call("InstanceService.Delete", lambda: instances.delete(DeleteInstanceRequest(id=op.resource_id)))
        for _ in range(4):
            await instances.list(ListInstancesRequest(parent_id=project, page_size=100))
        spot.spec.boot_disk = create.spec.boot_disk
        spot_op = await call("InstanceService.Create", lambda: instances.create(spot))
        if not spot_op:
            return

        async def listed_preemptible():
            page = await instances.list(ListInstancesRequest(parent_id=project, page_size=100))
            mine = need([i for i in page.items if i.metadata.id == spot_op.resource_id], f"{spot_op.resource_id} not listed")
            need(mine[0].spec.check_presence("preemptible") and mine[0].spec.preemptible.on_preemption == PreemptibleSpec.PreemptionPolicy.STOP,
                 f"not decoded preemptible: {mine[0].spec}")
            need(mine[0].spec.which_field_in_oneof("pricing_model") == "follows_spot_price", f"pricing model: {mine[0].spec}")
            return mine

        await call("InstanceService.List", listed_preemptible)
        await call("InstanceService.Delete", lambda: instances.delete(DeleteInstanceRequest(id=spot_op.resource_id)))
        for _ in range(4):
            await instances.list(ListInstancesRequest(parent_id=project, page_size=100))
        await call("DiskService.Delete", lambda: disks.delete(DeleteDiskRequest(id=disk_op.resource_id)))
    finally:
        await sdk.close()


asyncio.run(main())
d.done()
