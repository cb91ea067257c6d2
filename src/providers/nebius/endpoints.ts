/**
 * Where each Nebius service lives, derived as the official SDK's conventional resolver does
 * (nebius/base/resolver.py): `<name>.api.nebius.cloud:443`, where `<name>` is the service's
 * `api_service_name` annotation when its descriptor has one, else the second element of its
 * full name (`nebius.compute.v1.InstanceService` → `compute`). The contract suite compares
 * every address with the SDK's.
 */
export const DOMAIN = 'api.nebius.cloud:443';

/** The `api_service_name` annotations of the services we call (from the SDK's descriptors). */
const API_SERVICE_NAME: Record<string, string> = {
  'nebius.billing.v1.CalculatorService': 'api.calculator.billing-data-plane',
  'nebius.iam.v1.TokenExchangeService': 'tokens.iam',
  'nebius.capacity.v1.CapacityBlockGroupService': 'capacity-blocks.billing-cpl',
};

/** `host:port` of a service by its full name, e.g. `nebius.compute.v1.InstanceService`. */
export function serviceAddress(service: string): string {
  return `${API_SERVICE_NAME[service] ?? service.split('.')[1] ?? service}.${DOMAIN}`;
}
