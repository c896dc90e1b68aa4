"""Services: the defaults, the ClusterIP and NodePort allocation, and the status a create sets.

Twin of k8s.io/kubernetes ``pkg/apis/core/v1/defaults.go`` (SetDefaults_Service),
``pkg/registry/core/service/strategy.go`` (PrepareForCreate: status reset to
``{loadBalancer: {}}``) and ``pkg/registry/core/service/storage/alloc.go`` (the REST layer's
allocator: ipFamilies, ipFamilyPolicy, clusterIPs, node ports, and ``patchAllocatedValues``,
which keeps allocated values an update leaves out).

Each allocated ClusterIP is recorded as an IPAddress object named by the IP, as the
MultiCIDRServiceAllocator (GA since v1.33) writes it, and an IPAddress a user created holds
its IP too. Deliberate differences: one IPv4 service CIDR, 10.96.0.0/12; allocation scans the
stored Services and IPAddresses instead of keeping a bitmap, and the REST layer checks
(``still_free``) under the storage lock that nothing took them before it stores the Service.
"""

from __future__ import annotations

import ipaddress
import random
from collections.abc import Iterable

from kubesim.api import errors

__all__ = [
    "SERVICE_CIDR",
    "allocate",
    "default_service",
    "ip_addresses",
    "keep_allocated",
    "still_free",
]

SERVICE_CIDR = ipaddress.IPv4Network("10.96.0.0/12")  # kube-apiserver's --service-cluster-ip-range
NODE_PORTS = range(30000, 32768)  # --service-node-port-range 30000-32767
_NODE_PORT_TYPES = ("NodePort", "LoadBalancer")


def default_service(obj: dict) -> None:
    """SetDefaults_Service and the strategy's PrepareForCreate status."""
    spec = obj.setdefault("spec", {})
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    kind = spec["type"]
    for port in spec.get("ports") or []:
        if not isinstance(port, dict):
            continue
        port.setdefault("protocol", "TCP")
        # targetPort defaults to the port (an absent, 0 or "" targetPort)
        if not port.get("targetPort") and "port" in port:
            port["targetPort"] = port["port"]
    if kind in _NODE_PORT_TYPES:
        spec.setdefault("externalTrafficPolicy", "Cluster")
    if kind == "LoadBalancer":
        spec.setdefault("allocateLoadBalancerNodePorts", True)
    if kind != "ExternalName":
        spec.setdefault("internalTrafficPolicy", "Cluster")


def reset_status(obj: dict) -> None:
    """A create's status is the empty load balancer status, whatever the body sent."""
    obj["status"] = {"loadBalancer": {}}


def _service_ips(services: Iterable[dict], skip: str = "") -> set[str]:
    out = set()
    for svc in services:
        if svc["metadata"].get("uid") == skip:
            continue
        for ip in (svc.get("spec") or {}).get("clusterIPs") or []:
            out.add(ip)
    return out


def _node_ports(services: Iterable[dict], skip: str = "") -> set[int]:
    out = set()
    for svc in services:
        if svc["metadata"].get("uid") == skip:
            continue
        for port in (svc.get("spec") or {}).get("ports") or []:
            if isinstance(port, dict) and port.get("nodePort"):
                out.add(port["nodePort"])
    return out


def allocate(obj: dict, services: list[dict], reserved: Iterable[str] = ()) -> None:
    """Allocate what a new Service needs, or raise 422 as the real allocator does.

    ``services``: every stored Service (all namespaces: ClusterIPs and node ports are
    cluster-wide); ``reserved``: the IPs that IPAddress objects hold. ExternalName Services
    get no IP; headless ones ("None") keep it.
    """
    spec = obj["spec"]
    name = obj["metadata"].get("name", "")
    kind = spec.get("type")
    causes: list[dict] = []
    if kind != "ExternalName":
        causes += _allocate_cluster_ip(spec, services, set(reserved))
    if kind in _NODE_PORT_TYPES:
        causes += _allocate_node_ports(spec, services)
    if causes:
        raise errors.invalid("", "Service", name, causes)


def still_free(obj: dict, services: list[dict], reserved: Iterable[str] = ()) -> bool:
    """Whether the addresses ``allocate`` gave obj are still free: no other stored Service
    holds its ClusterIPs or node ports, and no IPAddress its IPs. The REST layer allocates
    before the validating webhooks run, with no lock held, and asks again under the lock
    before it stores the Service (upstream's allocator reserves them atomically instead)."""
    spec = obj.get("spec") or {}
    ips = {ip for ip in spec.get("clusterIPs") or [] if ip != "None"}
    if ips & (_service_ips(services) | set(reserved)):
        return False
    ports = {p.get("nodePort") for p in spec.get("ports") or [] if isinstance(p, dict)}
    return not (ports - {None, 0}) & _node_ports(services)


def _allocate_cluster_ip(spec: dict, services: list[dict], reserved: set[str]) -> list[dict]:
    requested = spec.get("clusterIP") or ((spec.get("clusterIPs") or [""])[0])
    # a headless Service without a selector takes every family the cluster has (one here)
    headless_any = requested == "None" and not spec.get("selector")
    spec.setdefault("ipFamilyPolicy", "RequireDualStack" if headless_any else "SingleStack")
    spec.setdefault("ipFamilies", ["IPv4"])
    if requested == "None":
        spec["clusterIP"], spec["clusterIPs"] = "None", ["None"]
        return []
    used = _service_ips(services) | reserved
    if requested:
        field = "spec.clusterIPs"
        try:
            ip = ipaddress.IPv4Address(requested)
        except ValueError:
            return [errors.field_invalid(field, [requested], "must be a valid IP address")]
        if ip not in SERVICE_CIDR or ip in (SERVICE_CIDR.network_address,):
            return [
                errors.field_invalid(
                    field,
                    [requested],
                    f"failed to allocate IP {requested}: the provided IP ({requested}) is not "
                    f"in the valid range. The range of valid IPs is {SERVICE_CIDR}",
                )
            ]
        if requested in used:
            return [
                errors.field_invalid(
                    field,
                    [requested],
                    f"failed to allocate IP {requested}: provided IP is already allocated",
                )
            ]
        spec["clusterIP"], spec["clusterIPs"] = requested, [requested]
        return []
    # dynamic allocation takes from the upper part of the range: the lower band (up to 256
    # addresses, 1/16 of the range) is kept for static IPs such as the kubernetes Service's
    size = SERVICE_CIDR.num_addresses
    band = min(max(16, size // 16), 256)
    for _ in range(64):
        candidate = str(SERVICE_CIDR.network_address + random.randrange(band, size - 1))
        if candidate not in used:
            spec["clusterIP"], spec["clusterIPs"] = candidate, [candidate]
            return []
    return [errors.field_invalid("spec.clusterIPs", [], "range is full")]


def _allocate_node_ports(spec: dict, services: list[dict]) -> list[dict]:
    used = _node_ports(services)
    causes = []
    for i, port in enumerate(spec.get("ports") or []):
        if not isinstance(port, dict):
            continue
        wanted = port.get("nodePort")
        if wanted:
            field = f"spec.ports[{i}].nodePort"
            if wanted not in NODE_PORTS:
                causes.append(
                    errors.field_invalid(
                        field,
                        wanted,
                        f"provided port is not in the valid range. The range of valid ports "
                        f"is {NODE_PORTS.start}-{NODE_PORTS.stop - 1}",
                    )
                )
            elif wanted in used:
                causes.append(
                    errors.field_invalid(field, wanted, "provided port is already allocated")
                )
            used.add(wanted)
            continue
        free = [p for p in random.sample(NODE_PORTS, 64) if p not in used]
        port["nodePort"] = free[0]
        used.add(free[0])
    return causes


def ip_addresses(svc: dict) -> list[dict]:
    """The IPAddress objects that record a Service's ClusterIPs (the allocator writes one per
    IP, named by it, its parentRef the Service)."""
    meta = svc["metadata"]
    out = []
    for ip in (svc.get("spec") or {}).get("clusterIPs") or []:
        if ip == "None":
            continue
        out.append(
            {
                "apiVersion": "networking.k8s.io/v1",
                "kind": "IPAddress",
                "metadata": {
                    "name": ip,
                    "labels": {
                        "ipaddress.kubernetes.io/ip-family": "IPv4",
                        "ipaddress.kubernetes.io/managed-by": "ipallocator.k8s.io",
                    },
                },
                "spec": {
                    "parentRef": {
                        "group": "",
                        "resource": "services",
                        "namespace": meta.get("namespace", ""),
                        "name": meta.get("name", ""),
                    }
                },
            }
        )
    return out


def keep_allocated(new: dict, old: dict) -> None:
    """patchAllocatedValues: an update that leaves out the ClusterIP or node ports keeps them
    (a ``kubectl replace`` of the file the user wrote must not try to change them)."""
    spec, ospec = new.setdefault("spec", {}), old.get("spec") or {}
    for f in ("clusterIP", "clusterIPs", "ipFamilies", "ipFamilyPolicy"):
        if f not in spec and f in ospec and spec.get("type", "ClusterIP") != "ExternalName":
            spec[f] = ospec[f]
    if spec.get("type") in _NODE_PORT_TYPES and ospec.get("type") in _NODE_PORT_TYPES:
        old_ports = {
            (p.get("port"), p.get("protocol", "TCP")): p.get("nodePort")
            for p in ospec.get("ports") or []
            if isinstance(p, dict)
        }
        for p in spec.get("ports") or []:
            if isinstance(p, dict) and not p.get("nodePort"):
                found = old_ports.get((p.get("port"), p.get("protocol", "TCP")))
                if found:
                    p["nodePort"] = found


_TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]


def validate_service(obj: dict, old: dict | None = None) -> list[dict]:
    """The parts of ValidateService a test meets first: the type, the ports' presence and
    numbers, and on update an allocated ClusterIP that must not change
    (pkg/apis/core/validation/validation.go)."""
    spec = obj.get("spec") or {}
    causes: list[dict] = []
    if old is not None:
        ospec = old.get("spec") or {}
        before, after = ospec.get("clusterIPs") or [], spec.get("clusterIPs") or []
        external = "ExternalName" in (spec.get("type"), ospec.get("type"))
        if before and not external and after[:1] != before[:1]:
            causes.append(
                errors.field_invalid("spec.clusterIPs[0]", after, "may not change once set")
            )
    kind = spec.get("type")
    if kind not in _TYPES:
        causes.append(errors.field_not_supported("spec.type", kind, _TYPES))
    ports = spec.get("ports") or []
    headless = spec.get("clusterIP") == "None"
    if not ports and kind != "ExternalName" and not headless:
        causes.append(errors.field_required("spec.ports"))
    names: set[str] = set()
    for i, port in enumerate(ports):
        if not isinstance(port, dict):
            continue
        number = port.get("port")
        if not isinstance(number, int) or not 1 <= number <= 65535:
            causes.append(
                errors.field_invalid(
                    f"spec.ports[{i}].port", number, "must be between 1 and 65535, inclusive"
                )
            )
        name = port.get("name") or ""
        if len(ports) > 1 and not name:
            causes.append(errors.field_required(f"spec.ports[{i}].name"))
        elif name in names:
            causes.append(errors.field_duplicate(f"spec.ports[{i}].name", name))
        names.add(name)
    return causes
