"""Which kube-apiserver release kubesim answers as: v1.36 by default, or v1.24.

No single twin: a real server *is* one release. The closest are k8s.io/component-base/version
(``/version``) and component-base/compatibility (the emulation version ``/version`` reports
since 1.31), and the feature gates of k8s.io/apiserver/pkg/features that changed what a
request gets between the two releases the project has recorded (recordings of real v1.24
and v1.36 servers).

Clients must cope with both: the controller's fallbacks (a WatchList refused with 422, say)
are tested against a kubesim that answers as v1.24, the rest of the suite against v1.36. So the
differences are named properties here, each read where the behaviour lives, rather than
version comparisons spread through the code; ``KubeSim(server_version=...)`` / ``--emulate``
set them all (WatchList's refusal among them, which ``watch_list=`` can still set alone).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["DEFAULT_SERVER_VERSION", "SUPPORTED_SERVER_VERSIONS", "ServerVersion"]

# The releases whose answers were recorded from a real server; kubesim emulates only those.
SUPPORTED_SERVER_VERSIONS = ("1.24", "1.36")
DEFAULT_SERVER_VERSION = "1.36"


@dataclass(frozen=True)
class ServerVersion:
    """One emulated release, ``major.minor``; ``ServerVersion.parse("1.24")``."""

    major: int
    minor: int

    @classmethod
    def parse(cls, text: str | ServerVersion) -> ServerVersion:
        """ "1.36", "v1.24" or "1.24.0"; ValueError for a release kubesim does not emulate."""
        if isinstance(text, ServerVersion):
            return text
        parts = str(text).strip().lstrip("v").split(".")
        short = ".".join(parts[:2])
        if short not in SUPPORTED_SERVER_VERSIONS or not all(p.isdigit() for p in parts):
            raise ValueError(
                f"server_version must be one of {', '.join(SUPPORTED_SERVER_VERSIONS)} "
                f"(got {text!r})"
            )
        return cls(int(parts[0]), int(parts[1]))

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}"

    def version_info(self) -> dict[str, str]:
        """The /version document (version.Info, in its field order); emulationMajor/Minor
        since the compatibility versions of 1.31 (KEP-4330), equal to the binary's own release
        when not emulating, and on v1.36 minCompatibilityMajor/Minor too: the effective
        version's minimum compatibility version, one minor below the binary by default
        (component-base/compatibility's ``effectiveVersion.Info``). 1.24 has none of them."""
        info = {"major": str(self.major), "minor": str(self.minor)}
        if self.minor >= 31:
            info["emulationMajor"] = str(self.major)
            info["emulationMinor"] = str(self.minor)
        if self.minor >= 36:
            info["minCompatibilityMajor"] = str(self.major)
            info["minCompatibilityMinor"] = str(self.minor - 1)
        info.update(
            {
                "gitVersion": f"v{self.major}.{self.minor}.0-kubesim",
                "gitCommit": "0000000000000000000000000000000000000000",
                "gitTreeState": "clean",
                "buildDate": "2025-01-01T00:00:00Z",
                "goVersion": "go1.24.0" if self.minor >= 36 else "go1.17.6",
                "compiler": "gc",
                "platform": "linux/amd64",
            }
        )
        return info

    # ---- what changed between the releases (each read where its behaviour lives) -------------

    @property
    def field_validation(self) -> bool:
        """Server-side field validation (fieldValidation=Strict|Warn|Ignore, default Warn):
        beta and on from 1.25 (GA 1.27). 1.24 prunes unknown fields silently, whatever the
        parameter says."""
        return self.minor >= 25

    @property
    def bad_resource_version_is_400(self) -> bool:
        """A list's unparsable resourceVersion: 400 BadRequest on 1.36; on 1.24 the storage's
        ParseResourceVersion error surfaced as a 500."""
        return self.minor >= 36

    @property
    def exact_future_list_waits(self) -> bool:
        """An Exact list at a resourceVersion the server has not reached: 1.36 waits for it
        (as the cache does) and answers 504 ResourceVersionTooLarge; 1.24 asked etcd at once,
        a 500 "required revision is a future revision"."""
        return self.minor >= 36

    @property
    def merge_patch_array_is_400(self) -> bool:
        """A JSON merge patch whose body is not an object: 400 BadRequest on 1.36, a 422 on
        field "patch" on 1.24."""
        return self.minor >= 36

    @property
    def type_errors_are_type_invalid(self) -> bool:
        """A custom resource field of the wrong type: cause FieldValueTypeInvalid on 1.36
        (kube-openapi's validation reports field.TypeInvalid), FieldValueInvalid on 1.24."""
        return self.minor >= 36

    @property
    def omits_zero_creation_timestamp(self) -> bool:
        """An ObjectMeta without creationTimestamp (a pod template's) omits it on 1.36
        (metav1.ObjectMeta's ``omitzero``); 1.24 wrote ``creationTimestamp: null``."""
        return self.minor >= 36

    @property
    def names_object_in_terminating_namespace(self) -> bool:
        """A create in a terminating namespace: the 403 names the object in details.name on
        1.36; 1.24 left the name out."""
        return self.minor >= 36

    @property
    def scaling_event_says_from(self) -> bool:
        """The deployment controller's ScalingReplicaSet message: "Scaled up replica set X
        from 0 to 2" on 1.36, "Scaled up replica set X to 2" on 1.24."""
        return self.minor >= 36

    @property
    def openapi_v2_is_json(self) -> bool:
        """/openapi/v2 asked for JSON answers Content-Type application/json on 1.36; 1.24 sent
        the JSON as text/plain."""
        return self.minor >= 36

    @property
    def crd_validation_rules(self) -> bool:
        """A CRD's x-kubernetes-validations (CEL): compiled and enforced on 1.36; on 1.24 the
        CustomResourceValidationExpressions gate was alpha and off, so the apiextensions
        strategy dropped the rules from the CRDs it stored and none was evaluated."""
        return self.minor >= 25

    @property
    def serves_watch_list(self) -> bool:
        """WatchList (watch with sendInitialEvents=true): served since the gate went beta and
        on in 1.34; 1.24's ListOptions validation refuses resourceVersionMatch on a watch with
        a 422. KubeSim's ``watch_list`` follows it unless given on its own."""
        return self.minor >= 34

    @property
    def counts_terminating_replicas(self) -> bool:
        """ReplicaSet and Deployment status carry ``terminatingReplicas`` (the
        DeploymentReplicaSetTerminatingReplicas gate: alpha in 1.33, beta and on from 1.35);
        1.24 had no such field."""
        return self.minor >= 35

    @property
    def tracks_pod_generation(self) -> bool:
        """Pods report ``status.observedGeneration`` and their conditions' observedGeneration
        (PodObservedGenerationTracking: beta in 1.34, GA in 1.35)."""
        return self.minor >= 35
