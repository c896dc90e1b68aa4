"""The generic REST verbs over storage: get, list, create, update, patch, delete, deletecollection.

Twin of k8s.io/apiserver/pkg/registry/generic/registry/store.go (the generic Store with its
create/update/delete strategies) plus the list/paging half of storage/etcd3/store.go.

A write through the verbs is computed with no lock held and stored with a compare-and-swap,
as the generic store's run inside etcd3's ``GuaranteedUpdate`` (storage/guaranteed.py): the
object is read, the request applied to it, the kind's strategy and validation and both
admissions (the webhooks) run, then under ``Storage.lock`` it is written only if the stored
object is still the one read; otherwise all of it runs again on the newer object. So a webhook
never runs under the lock (it may call kubesim back), and preconditions (resourceVersion, uid,
AlreadyExists) still hold for exactly the state being replaced: an explicit resourceVersion
that a concurrent write made stale is a 409 on the next attempt. A create is computed the
same way and stored if its name is still free. The in-process controllers' own writes
(``commit_update``, ``delete_locked``) are not admitted and run under the lock they hold.

Return values are ``Stored`` objects (encoded once) or Status dicts; the HTTP handlers
(handlers.py) serialise them. Watches are opened here (``open_watch``) and streamed by watch.py.
"""

from __future__ import annotations

import builtins
import json
import marshal
import random
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kubesim.api import duplicates, errors, warning
from kubesim.api.resources import Registry, ResourceInfo
from kubesim.api.version import DEFAULT_SERVER_VERSION, ServerVersion
from kubesim.protobuf.kinds import message_for
from kubesim.registry import kindstrategy, podadmission, service, sharding, strategy
from kubesim.registry import patch as patches
from kubesim.registry.admission import CREATE, DELETE, UPDATE, Admission, Attributes
from kubesim.registry.fieldmanager import (
    ABSENT,
    IN_PROCESS_MANAGER,
    FieldManager,
    manager_name,
    set_managed_fields,
)
from kubesim.registry.selection import build_filter, decode_continue, encode_continue
from kubesim.storage.guaranteed import Contended, Retry, guaranteed_update
from kubesim.storage.store import ExpiredError, Storage, Stored, Watcher, encode, normalize
from kubesim.validation import corevalidation

__all__ = ["Rest", "WatchRequest"]

_GENERATE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # utilrand.String's alphabet
_MAX_GENERATED_NAME_LENGTH = 58  # names.MaxGeneratedNameLength: 63 - 5 random characters
_NAME_GENERATION_ATTEMPTS = 8  # the generic store's maxNameGenerationCreateAttempts
# fieldValidation's values (metav1.FieldValidationIgnore, Warn, Strict)
FIELD_VALIDATION_DIRECTIVES = ("Ignore", "Warn", "Strict")
# _unknown_fields' "not a patch" marker (None is a patch value: a JSON null)
_NO_PATCH = object()
IMMORTAL_NAMESPACES = ("default", "kube-system", "kube-public")  # may not be deleted
FOREGROUND = "foregroundDeletion"
ORPHAN = "orphan"


def _dry_run(query: dict) -> bool:
    value = query.get("dryRun")
    if value is None:
        return False
    if value != "All":
        raise errors.invalid(
            "meta.k8s.io",
            "CreateOptions",
            "",
            [errors.field_not_supported("dryRun", [value], ["All"])],
        )
    return True


def _meta(obj: Any) -> dict:
    if not isinstance(obj, dict):
        raise errors.bad_request("the body of the request must be a JSON object")
    meta = obj.get("metadata")
    if meta is None:
        meta = {}
    if not isinstance(meta, dict):
        raise errors.bad_request("metadata must be an object")
    obj["metadata"] = meta
    return meta


@dataclass
class WatchRequest:
    """An opened watch and how to stream it (watch.py drives the stream)."""

    info: ResourceInfo  # the resource at the requested version (bookmark shape, apiVersion)
    watcher: Watcher | None  # None when the start RV was too old (expired is then set)
    expired: errors.ApiError | None  # 410 Status to send as one ERROR event, then close
    bookmarks: bool  # allowWatchBookmarks
    timeout: float  # seconds until the server ends the stream
    # a zero creationTimestamp is omitted (v1.36's omitzero), as in a Deployment's bookmark
    omit_zero_timestamp: bool = True


class Rest:
    """The verbs, shared by all resources; kind-specific rules come from strategy.py.

    Ownership: create/update take ownership of the body they are given (the HTTP layer passes
    freshly decoded JSON; in-process callers pass a deep copy) and may change it in place.
    """

    def __init__(
        self,
        storage: Storage,
        registry: Registry,
        validator=None,
        version: ServerVersion | None = None,
        unknown_fields=None,
        fields: FieldManager | None = None,
    ):
        self.storage = storage  # all objects; its lock serialises every write
        # the release answered as (api/version.py): where its answers differ, this decides
        self.version = version or ServerVersion.parse(DEFAULT_SERVER_VERSION)
        self.registry = registry  # served resources (CRD writes change it)
        # callable(info, obj, old) -> causes, pruning obj (CR schemas and their CEL rules)
        self.validator = validator
        # callable(info, obj) -> paths of the fields obj's schema does not declare, dropped from
        # it (validation/fields.py; sim.py hands it the built-in schemas); None: none checked
        self.unknown_fields = unknown_fields
        # managedFields and server-side apply; sim.py hands it the built-in kinds' schemas
        self.fields = fields or FieldManager()
        # callable(crd dict | None, name) after CRD writes (server wires it)
        self.on_crd_change = None
        self.list_wait_timeout = 3.0  # how long a too-new RV list waits before 504 (as the cacher)
        # False: refuse WatchList as kube-apiserver v1.24 did (a 422 on resourceVersionMatch),
        # so that a client's fallback to list+watch can be tested.
        self.watch_list = True
        # The ShardedListAndWatch gate (KEP-5866, alpha in v1.36, off by default there too): on,
        # list and watch honour shardSelector and a filtered list echoes it in shardInfo; off,
        # the parameter is ignored. registry/sharding.py has the parser.
        self.sharded_list_and_watch = False
        # admission webhooks (kubesim/admission/, wired by sim.py); None: no admission at all.
        # The verbs call it on writes that come through them, never on the controllers' own.
        self.admission: Admission | None = None

    # ---- helpers -------------------------------------------------------------------------------

    def _get_or_404(self, info: ResourceInfo, ns: str, name: str) -> Stored:
        stored = self.storage.get(info.storage_key, ns, name)
        if stored is None:
            raise errors.not_found(info.group, info.plural, name)
        return stored

    def _check_namespace_for_create(self, info: ResourceInfo, ns: str, name: str = "") -> None:
        """NamespaceLifecycle admission: 404 for a missing namespace, 403 for a terminating one
        (which names the object on 1.36: create.go takes the name from the body first)."""
        if not info.namespaced:
            return
        nsobj = self.storage.get(("", "namespaces"), "", ns)
        if nsobj is None:
            raise errors.not_found("", "namespaces", ns)
        if nsobj.obj["metadata"].get("deletionTimestamp"):
            msg = (
                f"{info.plural}{'.' + info.group if info.group else ''} is forbidden: unable to "
                f"create new content in namespace {ns} because it is being terminated"
            )
            raise errors.forbidden(
                info.group,
                info.plural,
                name if self.version.names_object_in_terminating_namespace else "",
                msg,
                causes=[
                    {
                        "reason": "NamespaceTerminating",
                        "message": f"namespace {ns} is being terminated",
                        "field": "metadata.namespace",
                    }
                ],
            )

    def _validate(
        self,
        info: ResourceInfo,
        obj: dict,
        name: str,
        old: dict | None = None,
        sub: str | None = None,
    ) -> None:
        """The kind's validation (then a CR's schema); on create, once those pass, the generic
        ObjectMeta pass every object gets (rest.BeforeCreate). 422 with every cause."""
        causes = strategy.validate(info, obj, old, sub)
        causes += corevalidation.validate(info, obj, old)
        if self.validator is not None and info.custom:
            causes += self.validator(info, obj, old)
        if not causes and old is None:
            causes = strategy.validate_generic(info, obj)
        if causes:
            raise errors.invalid(info.group, info.kind, name, causes)

    def _decode_kind(self, info: ResourceInfo, obj: dict, directive: str = "Ignore") -> None:
        """Decode a create's or update's body at the request's version into the stored form:
        check its kind, drop the fields its schema does not declare (reporting them as the
        field validation ``directive`` asks), convert."""
        kind, av = obj.get("kind"), obj.get("apiVersion")
        if info.custom and not kind:
            # the unstructured decoder requires a kind; the typer then cannot name the type
            # of the (now kind-less) object the body was decoded into
            raise errors.bad_request("Object 'Kind' is missing in 'object has no kind field '")
        if info.custom and kind != info.kind and (not av or av == info.group_version):
            # decoded as the body says, then the custom resource's ValidateTypeMeta refuses it
            name = (obj.get("metadata") or {}).get("name") or ""
            cause = errors.field_invalid("kind", kind, f"must be {info.kind}")
            raise errors.invalid(info.group, str(kind), name, [cause])
        if (kind and kind != info.kind) or (av and av != info.group_version):
            raise errors.bad_request(
                f"the API version in the data ({av}) does not match the expected API version "
                f"({info.group_version})"
                if av and av != info.group_version
                else f"the kind in the data ({kind}) does not match the expected kind ({info.kind})"
            )
        obj["kind"] = info.kind
        obj["apiVersion"] = info.group_version
        self._unknown_fields(info, obj, directive)
        info.to_storage(obj)

    def _field_validation(self, query: dict, options: str = "CreateOptions") -> str:
        """The request's field validation directive: fieldValidation, Warn when absent
        (handlers/rest.go's fieldValidation); "Ignore" on a server without the feature.

        options names the kind in the 422 for a value that is none of them (ValidateCreateOptions
        and its Update and Patch twins).
        """
        if not self.version.field_validation:
            return "Ignore"
        directive = query.get("fieldValidation") or ""
        if directive and directive not in FIELD_VALIDATION_DIRECTIVES:
            raise errors.invalid(
                "meta.k8s.io",
                options,
                "",
                [
                    errors.field_not_supported(
                        "fieldValidation", directive, ["", *FIELD_VALIDATION_DIRECTIVES]
                    )
                ],
            )
        return directive or "Warn"

    def _unknown_fields(
        self, info: ResourceInfo, obj: dict, directive: str, patch: Any = _NO_PATCH
    ) -> None:
        """Drop the fields obj's schema does not declare, then answer as the directive says.

        Strict: the create and update handlers' transformDecodeError of the strict decoding
        error (400), or for a patch the patcher's 422 on field "patch" (its value: the patched
        object's JSON for merge and JSON patches, the patch map for a strategic merge patch).
        Warn: one Warning per field. Ignore: nothing. The fields are dropped in every case, as
        decoding into the Go type drops them.
        """
        if self.unknown_fields is None:
            return
        found = self.unknown_fields(info, obj)
        # a create's or update's body may also have had duplicate keys (api/duplicates.py)
        repeated = duplicates.take() if patch is _NO_PATCH else []
        if (not found and not repeated) or directive == "Ignore":
            return
        problems = [f'duplicate field "{path}"' for path in repeated]
        problems += [f'unknown field "{path}"' for path in found]
        if directive == "Warn":
            for problem in problems:
                warning.add_warning(problem)
            return
        strict = "strict decoding error: " + ", ".join(problems)
        if patch is _NO_PATCH:
            raise errors.bad_request(
                f'{info.kind} in version "{info.version}" cannot be handled as a {info.kind}: '
                f"{strict}"
            )
        raise errors.invalid("", "", "", [errors.field_invalid("patch", patch, strict)])

    # ---- admission -----------------------------------------------------------------------------

    def _attributes(
        self,
        info: ResourceInfo,
        operation: str,
        ns: str,
        name: str,
        old: dict | None,
        sub: str | None,
        dry: bool,
        options: dict,
    ) -> Attributes | None:
        """The admission attributes of a write through the verbs; None without admission.

        A Namespace's own name is its namespace, except on create: RequestInfo reads the
        namespace from the URL, and ``/api/v1/namespaces/<name>`` names it.
        """
        if self.admission is None:
            return None
        if info.kind == "Namespace" and not info.custom and operation != CREATE:
            ns = name
        return Attributes(
            info, operation, ns, name, None, _versioned(info, old), sub or "", dry, options
        )

    def _admit_mutate(self, attrs: Attributes | None, obj: dict) -> dict:
        """Mutating admission on obj (in its stored form); the object to go on with.

        The webhooks see the object at the request's version; what they return is converted
        back to the stored form, with the request's kind and apiVersion (a patch may not
        change what the object is).
        """
        if attrs is None or self.admission is None:
            return obj
        versioned = _versioned(attrs.info, obj)
        attrs.obj = versioned
        self.admission.mutate(attrs)
        if attrs.obj is versioned or attrs.obj is None:
            return obj
        new = attrs.obj
        new["kind"], new["apiVersion"] = attrs.info.kind, attrs.info.group_version
        attrs.info.to_storage(new)
        _meta(new)
        return new

    def _admit_validate(self, attrs: Attributes | None, obj: dict | None) -> None:
        """Validating admission on the object about to be written (None: a delete).

        The attributes keep the request's name: a generateName create is validated with the
        generated name in the object and none in the request (AdmissionToValidateObjectFunc
        reuses the handler's static attributes).
        """
        if attrs is None or self.admission is None:
            return
        attrs.obj = _versioned(attrs.info, obj)
        self.admission.validate(attrs)

    # ---- get / list ----------------------------------------------------------------------------

    def get(self, info: ResourceInfo, ns: str, name: str) -> Stored:
        return self._get_or_404(info, ns, name)

    def list(self, info: ResourceInfo, ns: str, query: dict) -> bytes:
        """A list response body, following the resourceVersion/resourceVersionMatch rules.

        Where the real server reads (the cacher's delegator, shouldDelegateList):

        - etcd, paged: resourceVersionMatch=Exact; resourceVersion=N (not "0") with a limit and
          no match (the legacy exact read); a continue token (at its RV, or at the latest RV
          for the "-1" token an expired continue hands out); no resourceVersion (consistent);
        - the watch cache, limit ignored: resourceVersion "0", NotOlderThan, or N without a
          limit. It answers at its current RV once that reaches N; an N it has not reached in
          3 s is a 504 "Too large resource version".
        """
        shard = sharding.request_shard_ranges(query, self.sharded_list_and_watch)
        flt = build_filter(
            info,
            ns,
            query.get("labelSelector"),
            query.get("fieldSelector"),
            shard=shard[1] if shard else (),
        )
        rv_text = query.get("resourceVersion") or ""
        match = query.get("resourceVersionMatch") or ""
        cont = query.get("continue") or ""
        try:
            limit = int(query.get("limit") or 0)
        except ValueError:
            raise errors.bad_request(f"invalid limit {query.get('limit')!r}") from None
        _validate_list_options(rv_text, match, cont, query)
        if cont and rv_text not in ("", "0"):
            raise errors.bad_request(
                "specifying resource version is not allowed when using continue"
            )
        rv_req = (
            _parse_resource_version(rv_text, self.version.bad_resource_version_is_400)
            if rv_text
            else None
        )
        from_etcd = (
            match == "Exact"
            or bool(cont)
            or rv_req is None
            or (match == "" and limit > 0 and rv_req > 0)
        )
        if rv_req and (
            not from_etcd or (match == "Exact" and self.version.exact_future_list_waits)
        ):
            # The cache waits for an RV it has not reached; 1.36 serves Exact lists from the
            # cache's snapshots too, so a future Exact RV waits as well (then 504).
            self._wait_for_rv(rv_req)

        start_after: tuple[str, str] | None = None
        with self.storage.lock:
            current = self.storage.rv
            if cont:
                token_rv, start_after = decode_continue(cont, info.namespaced)
                snap_rv = token_rv if token_rv > 0 else current
                items = self._snapshot(info, snap_rv, continuing=start_after)
            elif rv_req is None or not from_etcd:
                snap_rv, items = current, self.storage.items(info.storage_key)
            else:
                if rv_req > current:
                    raise errors.internal_error(
                        "rpc error: code = OutOfRange desc = etcdserver: mvcc: required revision "
                        "is a future revision"
                    )
                snap_rv, items = rv_req, self._snapshot(info, rv_req)
        page = limit if from_etcd else 0  # the watch cache ignores limit
        return self._list_body(
            info, ns, items, flt, snap_rv, page, start_after, shard[0] if shard else None
        )

    def _wait_for_rv(self, rv: int) -> None:
        """A cache read at an RV the server has not reached waits, then 504 (cacher behaviour)."""
        deadline = time.monotonic() + self.list_wait_timeout
        while self.storage.rv < rv:
            if time.monotonic() >= deadline:
                raise errors.timeout(
                    f"Too large resource version: {rv}, current: {self.storage.rv}",
                    retry_after=1,
                    causes=[
                        {
                            "reason": "ResourceVersionTooLarge",
                            "message": "Too large resource version",
                        }
                    ],
                )
            time.sleep(0.02)

    def _snapshot(
        self, info: ResourceInfo, rv: int, continuing: tuple[str, str] | None = None
    ) -> builtins.list[Stored]:  # (the method list shadows the builtin here)
        """etcd's view of a resource at rv; 410 once compacted (etcd3's interpretListError).

        continuing: the (namespace, name) a continue token resumes after. Its 410 carries a
        new token (RV -1: "continue at the latest RV"), as handleCompactedErrorForPaging's does.
        """
        try:
            return self.storage.snapshot(info.storage_key, rv)
        except ExpiredError:
            if continuing is not None:
                raise errors.expired(
                    "The provided continue parameter is too old to display a consistent list "
                    "result. You can start a new list without the continue parameter, or use the "
                    "continue token in this response to retrieve the remainder of the results. "
                    "Continuing with the provided token results in an inconsistent list - objects "
                    "that were created, modified, or deleted between the time the first chunk was "
                    "returned and now may show up in the list.",
                    continue_token=encode_continue(-1, *continuing),
                ) from None
            raise errors.expired("The resourceVersion for the provided list is too old.") from None

    def _list_body(
        self, info, ns, items, flt, snap_rv, limit, start_after, shard_selector=None
    ) -> bytes:
        if ns:
            items = [s for s in items if s.obj["metadata"].get("namespace") == ns]
        if start_after is not None:
            items = [s for s in items if _okey(s) > start_after]
        selective = flt is not None and getattr(flt, "selective", True)
        out: list[Stored] = []
        more = False
        remaining = 0
        if limit > 0:
            examined = 0
            for s in items:
                examined += 1
                if flt is None or flt(s.obj):
                    out.append(s)
                    if len(out) >= limit:
                        break
            more = examined < len(items)
            remaining = len(items) - examined
        else:
            out = items if flt is None else [s for s in items if flt(s.obj)]
        meta: dict[str, Any] = {"resourceVersion": str(snap_rv)}
        if more:
            meta["continue"] = encode_continue(
                snap_rv, *_okey(out[-1] if out else items[examined - 1])
            )
            if not selective:
                meta["remainingItemCount"] = remaining
        elif info.custom:
            meta["continue"] = ""
        if shard_selector is not None:
            # ListMeta.shardInfo: the selector as the request sent it, on every page.
            meta["shardInfo"] = {"selector": shard_selector}
        if info.converter is not None:
            body = b",".join(info.item_json(s) for s in out)
        elif info.custom:
            gv = info.group_version
            body = b",".join(s.at_version(gv) for s in out)
        else:
            body = b",".join(s.bare() for s in out)
        head = {"kind": info.list_kind, "apiVersion": info.group_version, "metadata": meta}
        return encode(head)[:-1] + b',"items":[' + body + b"]}"

    # ---- create --------------------------------------------------------------------------------

    def create(
        self,
        info: ResourceInfo,
        ns: str,
        body: Any,
        query: dict,
        user_agent: str = IN_PROCESS_MANAGER,
    ) -> tuple[int, Stored]:
        """POST. user_agent names the field manager when the query has no fieldManager (the
        HTTP layer passes the request's; in-process callers are kube-controller-manager)."""
        dry = _dry_run(query)
        directive = self._field_validation(query, "CreateOptions")
        obj = body
        meta = _meta(obj)
        self._decode_kind(info, obj, directive)
        if meta.get("resourceVersion"):
            raise errors.internal_error_no_reason(
                "resourceVersion should not be set on objects to be created"
            )
        if info.namespaced:
            if meta.get("namespace") and meta["namespace"] != ns:
                raise errors.bad_request(
                    "the namespace of the provided object does not match the namespace sent on "
                    "the request"
                )
            meta["namespace"] = ns
        else:
            meta.pop("namespace", None)
        if not meta.get("name") and not meta.get("generateName"):
            raise errors.invalid(
                info.group,
                info.kind,
                "",
                [errors.field_required("metadata.name", "name or generateName is required")],
            )
        attrs = self._attributes(
            info, CREATE, ns, meta.get("name") or "", None, None, dry, _options("Create", query)
        )
        if attrs is not None:
            # NamespaceLifecycle comes first in the admission chain, before any webhook
            self._check_namespace_for_create(info, ns, meta.get("name") or "")
            obj = self._admit_mutate(attrs, obj)
            _check_namespace_unchanged(info, obj, ns)
        manager = manager_name(query, user_agent)
        return 201, self._create_admitted(info, ns, obj, dry, manager, attrs=attrs)

    def _create_admitted(
        self,
        info: ResourceInfo,
        ns: str,
        obj: dict,
        dry: bool,
        manager: str,
        applied: bool = False,
        attrs: Attributes | None = None,
    ) -> Stored:
        """Store.Create after mutating admission: prepare obj and call the validating admission
        with no lock held, then store it under the lock if its name is still free.

        A name taken meanwhile is a 409 AlreadyExists, except a generated one, which is
        generated again (createWithGenerateNameRetry: at most 8 attempts, each admitted anew);
        a Service's address another Service took meanwhile is allocated again.
        """
        meta = obj["metadata"]
        request_name = meta.get("name") or ""
        generated = not request_name and isinstance(meta.get("generateName"), str)
        is_service = (info.group, info.kind) == ("", "Service") and not info.custom
        # each attempt starts from the object as admitted; keep it only where one may follow
        pristine = _Pristine(obj) if generated or is_service else None
        for _ in range(_NAME_GENERATION_ATTEMPTS):
            attempt = pristine.take() if pristine is not None else obj
            self._prepare_create(info, ns, attempt, manager, applied)
            self._admit_validate(attrs, attempt)
            name = attempt["metadata"]["name"]
            with self.storage.lock:
                # the namespace may have gone, or begun terminating, while admission ran
                self._check_namespace_for_create(info, ns, request_name)
                existing = self.storage.get(info.storage_key, ns, name)
                if existing is not None and not generated:
                    deleting = bool(existing.obj["metadata"].get("deletionTimestamp"))
                    raise errors.already_exists(info.group, info.plural, name, deleting)
                if existing is None:
                    try:
                        return self._commit_create(info, ns, attempt, dry)
                    except Retry:
                        pass
        if generated:
            raise errors.generate_name_conflict(info.group, info.plural, name)
        raise errors.conflict(info.group, info.plural, name, errors.STALE_OBJECT)

    def _create_locked(
        self,
        info: ResourceInfo,
        ns: str,
        obj: dict,
        dry: bool,
        manager: str = IN_PROCESS_MANAGER,
    ) -> Stored:
        """Create obj without admission, under the lock the caller holds (the allocator's
        IPAddress objects, written in the same critical section as their Service)."""
        self._prepare_create(info, ns, obj, manager)
        return self._commit_create(info, ns, obj, dry)

    def _prepare_create(
        self,
        info: ResourceInfo,
        ns: str,
        obj: dict,
        manager: str = IN_PROCESS_MANAGER,
        applied: bool = False,
    ) -> None:
        """Make obj (after mutating admission) the object a create stores: BeforeCreate, the
        name generated, the kind's defaults and validation, a Service's addresses, uid,
        timestamps and managedFields. No lock needed: what it reads of storage is checked
        again by ``_commit_create``. applied: obj comes from an apply, its managedFields
        already made."""
        meta = obj["metadata"]
        requested = meta.pop("managedFields", ABSENT)
        # mutating admission runs before the name is generated and the strategy prepares obj
        podadmission.admit_create(self.storage, info, ns, obj)
        if not meta.get("name") and isinstance(meta.get("generateName"), str):
            # SimpleNameGenerator: the prefix cut to 58 characters, 5 random ones appended;
            # the store tries 8 names (maxNameGenerationCreateAttempts) before giving up.
            base = meta["generateName"][:_MAX_GENERATED_NAME_LENGTH]
            for _ in range(_NAME_GENERATION_ATTEMPTS):
                meta["name"] = base + "".join(random.choice(_GENERATE_ALPHABET) for _ in range(5))
                if self.storage.get(info.storage_key, ns, meta["name"]) is None:
                    break
            else:
                raise errors.generate_name_conflict(info.group, info.plural, meta["name"])
        name = meta["name"]
        for f in ("deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"):
            meta.pop(f, None)
        strategy.prepare_create(
            info,
            obj,
            self.version.omits_zero_creation_timestamp,
            self.version.crd_validation_rules,
        )
        self._validate(info, obj, name)
        existing = self.storage.get(info.storage_key, ns, name)
        if existing is not None:
            deleting = bool(existing.obj["metadata"].get("deletionTimestamp"))
            raise errors.already_exists(info.group, info.plural, name, deleting)
        if (info.group, info.kind) == ("", "Service") and not info.custom:
            # the REST layer's allocator: ClusterIPs and node ports are cluster-wide, and an
            # IPAddress object holds its IP (IPAddresses are served from 1.33 on)
            services, reserved = self._allocated(info)
            service.allocate(obj, services, reserved)
        meta["uid"] = str(uuid.uuid4())
        kindstrategy.with_uid(info.group, info.kind, obj)
        meta["creationTimestamp"] = strategy.now_rfc3339()
        if info.has_generation:
            meta["generation"] = 1
        else:
            meta.pop("generation", None)
        if applied:
            set_managed_fields(meta, requested)
        else:
            self.fields.update(info, None, obj, manager, None, requested)

    def _allocated(self, info: ResourceInfo) -> tuple[builtins.list[dict], builtins.list[str]]:
        """What Service allocation must avoid: every stored Service, and the IPs that
        IPAddress objects hold."""
        ip_info = self.registry.lookup("networking.k8s.io", "v1", "ipaddresses")
        reserved = (
            [s.obj["metadata"]["name"] for s in self.storage.items(ip_info.storage_key)]
            if ip_info is not None
            else []
        )
        return [s.obj for s in self.storage.items(info.storage_key)], reserved

    def _commit_create(self, info: ResourceInfo, ns: str, obj: dict, dry: bool) -> Stored:
        """Store a prepared (and admitted) obj whose name is free; the caller holds the lock.

        Raises ``Retry`` when a Service's addresses were taken since they were allocated."""
        meta = obj["metadata"]
        is_service = (info.group, info.kind) == ("", "Service") and not info.custom
        if is_service and not service.still_free(obj, *self._allocated(info)):
            raise Retry()
        if dry:
            meta.pop("resourceVersion", None)
            if info.kind == "CustomResourceDefinition" and not info.custom:
                # nothing establishes a CRD that is not stored
                obj["status"] = strategy.unestablished_crd_status(obj)
            return Stored(normalize(obj))
        stored = self.storage.put(info.storage_key, ns, meta["name"], obj)
        if info.kind == "CustomResourceDefinition" and not info.custom:
            self._crd_changed(stored.obj)
        ip_info = self.registry.lookup("networking.k8s.io", "v1", "ipaddresses")
        if is_service and ip_info is not None:
            for address in service.ip_addresses(stored.obj):
                self._create_locked(ip_info, "", address, False, "kube-apiserver")
        return stored

    def _crd_changed(self, crd: dict | None, name: str = "") -> None:
        if crd is not None:
            self.registry.set_crd(crd)
        else:
            self.registry.remove_crd(name)
        if self.on_crd_change:
            self.on_crd_change(crd, name)

    # ---- update --------------------------------------------------------------------------------

    def update(
        self,
        info: ResourceInfo,
        ns: str,
        name: str,
        body: Any,
        query: dict,
        sub: str | None = None,
        user_agent: str = IN_PROCESS_MANAGER,
        field_sub: str | None = None,
    ) -> tuple[int, Stored]:
        """PUT (user_agent as for create). field_sub: the subresource the managedFields entry
        names when it is not ``sub`` (/scale writes the main resource)."""
        dry = _dry_run(query)
        directive = self._field_validation(query, "UpdateOptions")
        obj = body
        meta = _meta(obj)
        self._decode_kind(info, obj, directive)
        if meta.get("name") != name:
            raise errors.bad_request(
                f"the name of the object ({meta.get('name', '')}) does not match the name on the "
                f"URL ({name})"
            )
        if info.namespaced:
            if meta.get("namespace") and meta["namespace"] != ns:
                raise errors.bad_request(
                    "the namespace of the provided object does not match the namespace sent on "
                    "the request"
                )
            meta["namespace"] = ns
        # the request's object, as sent, for each attempt (an attempt changes it)
        pristine = _Pristine(obj)

        def updated(old: Stored) -> dict:
            new = pristine.take()
            rv = new["metadata"].get("resourceVersion")
            if not rv:
                if info.require_rv_on_update:
                    raise errors.invalid(
                        info.group,
                        info.plural,
                        name,
                        [
                            {
                                "reason": "FieldValueInvalid",
                                "message": "Invalid value: 0x0: must be specified for an update",
                                "field": "metadata.resourceVersion",
                            }
                        ],
                    )
            elif rv != old.obj["metadata"]["resourceVersion"]:
                raise errors.conflict(info.group, info.plural, name, errors.STALE_OBJECT)
            return new

        def created() -> tuple[dict, Attributes | None]:
            # an update that creates is admitted as a CREATE
            self._check_namespace_for_create(info, ns, name)
            new = pristine.take()
            new["metadata"].pop("resourceVersion", None)
            attrs = self._attributes(
                info, CREATE, ns, name, None, None, dry, _options("Create", query)
            )
            new = self._admit_mutate(attrs, new)
            _check_namespace_unchanged(info, new, ns)
            return new, attrs

        may_create = info.allow_create_on_update and sub is None
        return self._guaranteed_update(
            info,
            ns,
            name,
            query,
            updated,
            created if may_create else None,
            sub=sub,
            manager=manager_name(query, user_agent),
            field_sub=field_sub,
        )

    def update_from_current(
        self,
        info: ResourceInfo,
        ns: str,
        name: str,
        query: dict,
        updated: Callable[[Stored], dict],
        user_agent: str = IN_PROCESS_MANAGER,
        field_sub: str | None = None,
    ) -> Stored:
        """An update whose new object is made from the current one on each attempt, as the
        /scale subresource's ``scaleUpdatedObjectInfo`` makes it (registry/scale.py).

        updated(old): the new object in the stored form (fresh), its preconditions checked.
        """
        _dry_run(query)
        self._field_validation(query, "UpdateOptions")
        manager = manager_name(query, user_agent)
        _, stored = self._guaranteed_update(
            info, ns, name, query, updated, None, sub=None, manager=manager, field_sub=field_sub
        )
        return stored

    def _guaranteed_update(
        self,
        info: ResourceInfo,
        ns: str,
        name: str,
        query: dict,
        updated: Callable[[Stored], dict],
        created: Callable[[], tuple[dict, Attributes | None]] | None,
        *,
        sub: str | None,
        manager: str,
        applied: bool = False,
        field_sub: str | None = None,
    ) -> tuple[int, Stored]:
        """Store.Update: the update (or the create, where the object is missing and
        ``created`` is given) computed and admitted with no lock held, then written under the
        lock if the object is still the one it was computed from, else computed again from
        the newer one (storage/guaranteed.py).

        updated(old): the request's new object against ``old``, in the stored form, fresh on
        each call, its preconditions checked (a stale resourceVersion is a 409 here, which is
        final: ``old`` was current when read). created(): the object to create, mutating
        admission done, and its admission attributes.
        """
        dry = bool(query.get("dryRun"))

        def try_update(old: Stored | None) -> dict:
            if old is None:
                if created is None:
                    raise errors.not_found(info.group, info.plural, name)
                new, attrs = created()
                self._prepare_create(info, ns, new, manager, applied)
                self._admit_validate(attrs, new)
                return new
            attrs = self._attributes(
                info, UPDATE, ns, name, old.obj, sub, dry, _options("Update", query)
            )
            return self._prepare_update(
                info, old, updated(old), sub, manager, applied, field_sub, attrs
            )

        def commit(old: Stored | None, new: dict) -> tuple[int, Stored]:
            if old is None:
                # the namespace may have gone, or begun terminating, while admission ran
                self._check_namespace_for_create(info, ns, name)
                return 201, self._commit_create(info, ns, new, dry)
            return 200, self._write_update(info, old, new, sub, dry)

        try:
            return guaranteed_update(self.storage, info.storage_key, ns, name, try_update, commit)
        except Contended:
            raise errors.conflict(info.group, info.plural, name, errors.STALE_OBJECT) from None

    def commit_update(
        self,
        info: ResourceInfo,
        old: Stored,
        obj: dict,
        sub: str | None,
        dry: bool,
        manager: str = IN_PROCESS_MANAGER,
        applied: bool = False,
        field_sub: str | None = None,
    ) -> Stored:
        """Apply the update strategy to obj (fresh) against old and write unless it is a no-op,
        without admission.

        For the in-process controllers (namespace, CRD finalizer, garbage collector) that
        rewrite an object they have just read: the caller holds ``storage.lock`` and has read
        ``old`` under it. manager owns what the write changes; applied: obj comes from an
        apply, its managedFields already made.
        """
        new = self._prepare_update(info, old, obj, sub, manager, applied, field_sub, None)
        return self._write_update(info, old, new, sub, dry)

    def _prepare_update(
        self,
        info: ResourceInfo,
        old: Stored,
        obj: dict,
        sub: str | None,
        manager: str,
        applied: bool,
        field_sub: str | None,
        attrs: Attributes | None,
    ) -> dict:
        """The object an update of ``old`` to ``obj`` (fresh, changed in place) stores:
        mutating admission, the kind's update strategy and validation, managedFields, then
        validating admission (attrs: the request's; None: not admitted). Needs no lock; the
        result is only written if ``old`` is still current."""
        obj = self._admit_mutate(attrs, obj)
        ometa = old.obj["metadata"]
        meta = obj["metadata"]
        # A subresource write never sets managedFields (ignoreManagedFieldsFromRequestObject).
        requested = meta.get("managedFields", ABSENT) if applied or sub is None else ABSENT
        name = ometa["name"]
        if meta.get("uid") and meta["uid"] != ometa["uid"]:
            raise errors.conflict(
                info.group,
                info.plural,
                name,
                f"Precondition failed: UID in precondition: {meta['uid']}, UID in object meta: "
                f"{ometa['uid']}",
            )
        if meta.get("name", name) != name:
            raise errors.bad_request(
                f"the name of the object ({meta.get('name')}) does not match the name on the URL "
                f"({name})"
            )
        obj["kind"], obj["apiVersion"] = old.obj["kind"], info.stored_api_version
        if sub in ("status", "approval"):
            obj = strategy.prepare_status_update(info, obj, old.obj, sub)
            meta = obj["metadata"]
            self._validate(info, obj, name, old.obj, sub)
        else:
            strategy.prepare_update(
                info,
                obj,
                old.obj,
                sub,
                self.version.omits_zero_creation_timestamp,
                self.version.crd_validation_rules,
            )
            # System-owned metadata comes from the stored object.
            for f in (
                "uid",
                "creationTimestamp",
                "deletionTimestamp",
                "deletionGracePeriodSeconds",
                "generation",
            ):
                if f in ometa:
                    meta[f] = ometa[f]
                else:
                    meta.pop(f, None)
            meta.pop("selfLink", None)
            if info.namespaced:
                meta["namespace"] = ometa.get("namespace", "")
            if ometa.get("deletionTimestamp"):
                added = [
                    f
                    for f in meta.get("finalizers") or []
                    if f not in (ometa.get("finalizers") or [])
                ]
                if added:
                    # ValidateNoNewFinalizers runs twice: in the generic BeforeUpdate's
                    # ValidateObjectMetaAccessorUpdate and again in the kind's ValidateUpdate
                    # (ValidateObjectMetaUpdate), so the real 422 has the cause twice.
                    cause = errors.field_forbidden(
                        "metadata.finalizers",
                        "no new finalizers can be added if the object is being deleted, "
                        "found new finalizers "
                        + "[]string{"
                        + ", ".join(json.dumps(a) for a in sorted(set(added)))
                        + "}",
                    )
                    raise errors.invalid(info.group, info.kind, name, [cause, dict(cause)])
            self._validate(info, obj, name, old.obj, sub)
            if info.has_generation and strategy.spec_changed(info, obj, old.obj):
                meta["generation"] = int(ometa.get("generation") or 0) + 1
        if applied:
            set_managed_fields(meta, requested)
        else:
            self.fields.update(info, old.obj, obj, manager, sub, requested, field_sub)
        self._admit_validate(attrs, obj)
        meta["resourceVersion"] = ometa["resourceVersion"]
        return normalize(obj)

    def _write_update(
        self, info: ResourceInfo, old: Stored, obj: dict, sub: str | None, dry: bool
    ) -> Stored:
        """Write what ``_prepare_update`` made of ``old``, unless it is a no-op; the caller
        holds ``storage.lock`` and ``old`` is still the stored object."""
        if obj == old.obj:
            return old  # a no-op write: same resourceVersion, no event
        if dry:
            return Stored(obj)
        ometa, meta = old.obj["metadata"], obj["metadata"]
        name, ns = ometa["name"], ometa.get("namespace", "")
        # a Namespace is also held by spec.finalizers (the namespace registry's
        # ShouldDeleteNamespaceDuringUpdate): only the namespace controller's finalize frees it
        held_by_spec = (
            info.kind == "Namespace"
            and not info.custom
            and (obj.get("spec") or {}).get("finalizers")
        )
        if ometa.get("deletionTimestamp") and not meta.get("finalizers") and not held_by_spec:
            gone = self.storage.remove(info.storage_key, ns, name)
            meta["resourceVersion"] = (
                gone.obj["metadata"]["resourceVersion"] if gone else meta["resourceVersion"]
            )
            self._after_delete(info, old.obj)
            return Stored(obj)
        stored = self.storage.put(info.storage_key, ns, name, obj)
        if info.kind == "CustomResourceDefinition" and not info.custom and sub is None:
            self._crd_changed(stored.obj)
        return stored

    # ---- patch ---------------------------------------------------------------------------------

    def patch(
        self,
        info: ResourceInfo,
        ns: str,
        name: str,
        content_type: str,
        raw: bytes,
        query: dict,
        sub: str | None = None,
        user_agent: str = IN_PROCESS_MANAGER,
    ) -> tuple[int, Stored]:
        """PATCH: merge, JSON or strategic merge patch, or server-side apply (fieldmanager.py).

        user_agent as for create; an apply needs ``fieldManager``.
        """
        dry = _dry_run(query)
        directive = self._field_validation(query, "PatchOptions")
        ptype = content_type.split(";")[0].strip().lower()
        accepted = patches.accepted_patch_types(info.custom)
        if ptype not in accepted:
            raise errors.unsupported_media_type(accepted)
        body = _decode_patch(ptype, raw)
        if (
            ptype == patches.MERGE
            and not isinstance(body, dict)
            and self.version.merge_patch_array_is_400
        ):
            # 1.36 decodes a merge patch into a map first (for field validation, whose default
            # is Warn): an array or scalar fails there; without validation evanphx/json-patch
            # refuses it as ErrBadJSONPatch. Both are 400s.
            if directive == "Ignore":
                raise errors.bad_request("Invalid JSON Patch")
            raise errors.bad_request(
                "error decoding patch: json: cannot unmarshal "
                f"{_json_kind(body)} into Go value of type map[string]interface {{}}"
            )
        if ptype == patches.MERGE and not isinstance(body, dict):
            raise errors.invalid(
                info.group,
                info.kind,
                name,
                [
                    {
                        "reason": "FieldValueInvalid",
                        "message": 'Invalid value: "": unexpected non-object patch',
                        "field": "patch",
                    }
                ],
            )
        force = _patch_force(ptype, query)
        if ptype == patches.APPLY and not isinstance(body, dict):
            raise errors.bad_request("apply patch body must be an object")
        manager = manager_name(query, user_agent)
        applied = ptype == patches.APPLY
        # an apply's configuration, as sent, for each attempt (other patches are only read)
        config = _Pristine(body)

        def patched(old: Stored) -> dict:
            # the patch applied to the object as it is now (the patcher's applyPatch, run on
            # each attempt of the update)
            base = info.patch_base(old)
            if ptype == patches.MERGE:
                new = patches.apply_merge_patch(base, body)
            elif ptype == patches.JSON_PATCH:
                new = patches.apply_json_patch(base, body)
            elif ptype == patches.STRATEGIC:
                new = patches.apply_strategic_merge_patch(
                    base, body, message_for(info.group_version, info.kind)
                )
            else:
                _check_apply_name(body, name)
                # the applied configuration's values may end up in (and be changed with) the
                # result: each attempt applies the configuration as sent
                new = self.fields.apply(info, base, config.take(), manager, force, sub)
            if not isinstance(new, dict):
                raise errors.bad_request("patched object is not a JSON object")
            if ptype == patches.STRATEGIC:
                shown: Any = errors.GoStringer(errors.go_format(body))
            else:
                shown = json.dumps(new, separators=(",", ":"), sort_keys=True)
            # (server-side apply reports its unknown fields its own way: dropped here silently)
            self._unknown_fields(info, new, "Ignore" if applied else directive, shown)
            info.to_storage(new)
            meta = _meta(new)
            rv = meta.get("resourceVersion")
            if rv and rv != old.obj["metadata"]["resourceVersion"]:
                raise errors.conflict(info.group, info.plural, name, errors.STALE_OBJECT)
            if info.namespaced and meta.get("namespace", ns) != ns:
                raise errors.bad_request(
                    "the namespace of the provided object does not match the namespace sent on "
                    "the request"
                )
            return new

        def created() -> tuple[dict, Attributes | None]:
            # an apply of a missing object creates it, owned by the applier (admitted as a
            # CREATE with the PatchOptions' fields)
            attrs = self._attributes(
                info, CREATE, ns, name, None, None, dry, _options("Create", query)
            )
            new = self._apply_create(info, ns, name, config.take(), manager, force)
            new = self._admit_mutate(attrs, new)
            _check_namespace_unchanged(info, new, ns)
            return new, attrs

        # the patch handler admits a patch as an UPDATE with the PatchOptions' fields
        return self._guaranteed_update(
            info,
            ns,
            name,
            query,
            patched,
            created if applied and sub is None else None,
            sub=sub,
            manager=manager,
            applied=applied,
        )

    def _apply_create(
        self, info: ResourceInfo, ns: str, name: str, body: dict, manager: str, force: bool
    ) -> dict:
        """The object an apply of a missing object creates, in the stored form, before
        admission."""
        _check_apply_name(body, name)
        self._check_namespace_for_create(info, ns, name)
        obj = self.fields.apply(info, None, body, manager, force)
        meta = _meta(obj)
        meta["name"] = name
        if info.namespaced:
            if meta.get("namespace", ns) != ns:
                raise errors.bad_request(
                    "the namespace of the provided object does not match the namespace sent on "
                    "the request"
                )
            meta["namespace"] = ns
        obj["kind"] = info.kind
        obj["apiVersion"] = info.group_version
        info.to_storage(obj)
        return obj

    # ---- delete --------------------------------------------------------------------------------

    def _delete_options(self, query: dict, body: Any) -> dict:
        opts = dict(body) if isinstance(body, dict) else {}
        if "propagationPolicy" in query:
            opts["propagationPolicy"] = query["propagationPolicy"]
        if "dryRun" in query:
            opts["dryRun"] = [query["dryRun"]]
        policy = opts.get("propagationPolicy")
        if policy is not None and policy not in ("Foreground", "Background", "Orphan"):
            raise errors.invalid(
                "meta.k8s.io",
                "DeleteOptions",
                "",
                [
                    errors.field_not_supported(
                        "propagationPolicy", policy, ["Foreground", "Background", "Orphan", "nil"]
                    )
                ],
            )
        dry = opts.get("dryRun") or []
        if dry and dry != ["All"]:
            raise errors.invalid(
                "meta.k8s.io",
                "DeleteOptions",
                "",
                [errors.field_not_supported("dryRun", dry, ["All"])],
            )
        return opts

    def delete(
        self, info: ResourceInfo, ns: str, name: str, query: dict, body: Any
    ) -> tuple[int, Any]:
        opts = self._delete_options(query, body)
        if info.kind == "Namespace" and not info.custom and name in IMMORTAL_NAMESPACES:
            # NamespaceLifecycle admission refuses these before anything else.
            raise errors.forbidden(
                "",
                "namespaces",
                name,
                f'namespaces "{name}" is forbidden: this namespace may not be deleted',
            )
        dry = bool(opts.get("dryRun"))
        attrs = self._attributes(
            info, DELETE, ns, name, None, None, dry, _options("Delete", {}, opts)
        )
        if attrs is not None and self.admission is not None:
            # the delete handler's mutating admission: no object, and no old object either
            self.admission.mutate(attrs)
        return 200, self._delete_admitted(info, ns, name, opts, attrs)

    def _delete_admitted(
        self, info: ResourceInfo, ns: str, name: str, opts: dict, attrs: Attributes | None
    ) -> Any:
        """Store.Delete after the mutating admission: the preconditions checked and the
        validating admission called on the object as read, with no lock held; then, under the
        lock, the delete (or the marking for deletion) if it is still that object, else all
        of it again on the newer one (etcd3's conditionalDelete)."""

        def try_delete(old: Stored | None) -> None:
            if old is None:
                raise errors.not_found(info.group, info.plural, name)
            _check_delete_preconditions(info, old, opts)
            if attrs is not None:
                attrs.old = _versioned(info, old.obj)
            self._admit_validate(attrs, None)

        def commit(old: Stored | None, _: None) -> Any:
            assert old is not None  # try_delete refused a missing object
            return self._delete_checked(info, old, opts)

        try:
            return guaranteed_update(self.storage, info.storage_key, ns, name, try_delete, commit)
        except Contended:
            raise errors.conflict(info.group, info.plural, name, errors.STALE_OBJECT) from None

    def delete_locked(self, info: ResourceInfo, old: Stored, opts: dict) -> Any:
        """Delete ``old`` as DELETE with DeleteOptions ``opts`` would, without admission; the
        caller holds ``storage.lock`` and has read ``old`` under it (the namespace controller,
        the garbage collector and the workload controllers).

        Returns the object (now marked for deletion, when finalizers hold it) or a Success
        Status once it is gone.
        """
        _check_delete_preconditions(info, old, opts)
        return self._delete_checked(info, old, opts)

    def _delete_checked(self, info: ResourceInfo, old: Stored, opts: dict) -> Any:
        """The delete of ``old`` once its preconditions hold and it is admitted; the caller
        holds ``storage.lock`` and ``old`` is the stored object."""
        ometa = old.obj["metadata"]
        name, ns = ometa["name"], ometa.get("namespace", "")
        dry = bool(opts.get("dryRun"))
        if ometa.get("deletionTimestamp"):
            return old  # already being deleted: the object, no write
        policy = opts.get("propagationPolicy")
        finalizers = list(ometa.get("finalizers") or [])
        if policy == "Foreground":
            finalizers = [f for f in finalizers if f != ORPHAN]
            if FOREGROUND not in finalizers:
                finalizers.append(FOREGROUND)
        elif policy == "Orphan":
            finalizers = [f for f in finalizers if f != FOREGROUND]
            if ORPHAN not in finalizers:
                finalizers.append(ORPHAN)
        is_namespace = info.kind == "Namespace" and not info.custom
        if finalizers or is_namespace:
            obj = dict(old.obj)
            meta = dict(ometa)
            obj["metadata"] = meta
            meta["deletionTimestamp"] = strategy.now_rfc3339()
            meta["deletionGracePeriodSeconds"] = 0
            if finalizers:
                meta["finalizers"] = finalizers
            if info.has_generation:
                meta["generation"] = int(ometa.get("generation") or 0) + 1
            if is_namespace:
                obj["status"] = dict(obj.get("status") or {}, phase="Terminating")
            if dry:
                return Stored(obj)
            return self.storage.put(info.storage_key, ns, name, obj)
        if dry:
            return (
                old
                if info.return_deleted_object
                else errors.delete_success(info.group, info.plural, name, ometa["uid"])
            )
        self.storage.remove(info.storage_key, ns, name)
        self._after_delete(info, old.obj)
        if info.return_deleted_object:
            return old  # the registry's ReturnDeletedObject: the object as it was deleted
        return errors.delete_success(info.group, info.plural, name, ometa["uid"])

    def _after_delete(self, info: ResourceInfo, obj: dict) -> None:
        if info.kind == "CustomResourceDefinition" and not info.custom:
            self._crd_changed(None, obj["metadata"]["name"])
        ip_info = self.registry.lookup("networking.k8s.io", "v1", "ipaddresses")
        if (info.group, info.kind) == ("", "Service") and not info.custom and ip_info:
            # the allocator releases the Service's IPs: their IPAddress objects go
            for address in service.ip_addresses(obj):
                self.storage.remove(ip_info.storage_key, "", address["metadata"]["name"])

    def delete_collection(self, info: ResourceInfo, ns: str, query: dict, body: Any) -> bytes:
        """DELETE on a collection: delete every match; returns the list of deleted objects."""
        opts = self._delete_options(query, body)
        flt = build_filter(info, ns, query.get("labelSelector"), query.get("fieldSelector"))
        items = [
            s
            for s in self.storage.items(info.storage_key)
            if (not ns or s.obj["metadata"].get("namespace") == ns) and (flt is None or flt(s.obj))
        ]
        out = []
        for s in items:
            # each object is deleted as a DELETE of its own (upstream's workers call Delete
            # per item, with deleteValidation); one gone meanwhile is skipped, as there
            meta = s.obj["metadata"]
            item_ns = meta.get("namespace", "")
            attrs = self._attributes(
                info,
                DELETE,
                item_ns,
                meta["name"],
                s.obj,
                None,
                bool(opts.get("dryRun")),
                _options("Delete", {}, opts),
            )
            try:
                res = self._delete_admitted(info, item_ns, meta["name"], opts, attrs)
            except errors.ApiError as e:
                if e.code != 404:
                    raise
                continue
            out.append(res if isinstance(res, Stored) else s)
        return self._list_body(info, "", out, None, self.storage.rv, 0, None)

    # ---- watch ---------------------------------------------------------------------------------

    def open_watch(
        self, info: ResourceInfo, ns: str, query: dict, name: str | None = None
    ) -> WatchRequest:
        """Validate a watch request and register its watcher (before any byte is streamed)."""
        shard = sharding.request_shard_ranges(query, self.sharded_list_and_watch)
        flt = build_filter(
            info,
            ns,
            query.get("labelSelector"),
            query.get("fieldSelector"),
            name,
            shard=shard[1] if shard else (),
        )
        rv_text = query.get("resourceVersion") or ""
        match = query.get("resourceVersionMatch")
        send_initial = query.get("sendInitialEvents")
        bookmarks = query.get("allowWatchBookmarks") in ("true", "1", "True")
        try:
            timeout = float(query.get("timeoutSeconds") or 0) or 1800.0
        except ValueError:
            raise errors.bad_request("invalid timeoutSeconds") from None
        initial_flag = send_initial in ("true", "1", "True")
        if not self.watch_list:
            _validate_watch_options_v1_24(rv_text, match or "", query.get("continue") or "")
            # v1.24 knows no sendInitialEvents: the parameter is dropped, unread.
            send_initial, initial_flag = None, False
        elif send_initial is not None:
            causes = []
            if match != "NotOlderThan":
                causes.append(
                    errors.field_forbidden(
                        "resourceVersionMatch",
                        "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
                    )
                )
            if initial_flag and not bookmarks:
                causes.append(
                    errors.field_forbidden(
                        "allowWatchBookmarks",
                        "sendInitialEvents requires setting allowWatchBookmarks to true",
                    )
                )
            if causes:
                raise errors.invalid("meta.k8s.io", "ListOptions", "", causes)
        elif match:
            raise errors.invalid(
                "meta.k8s.io",
                "ListOptions",
                "",
                [
                    errors.field_forbidden(
                        "resourceVersionMatch",
                        "resourceVersionMatch is forbidden for watch unless sendInitialEvents is "
                        "provided",
                    )
                ],
            )
        try:
            rv = int(rv_text) if rv_text else 0
            if rv < 0:
                raise ValueError
        except ValueError:
            raise errors.bad_request(f'invalid resource version "{rv_text}"') from None
        if initial_flag:
            if rv:
                self._wait_for_rv(rv)
            since, initial = None, True
        elif rv == 0:
            since, initial = None, True
        else:
            since, initial = rv, False
        try:
            w = self.storage.watch(
                info.storage_key, flt, since, initial, mark_initial_end=initial_flag
            )
        except ExpiredError as e:
            return WatchRequest(info, None, errors.expired(str(e)), bookmarks, timeout)
        omit = self.version.omits_zero_creation_timestamp
        return WatchRequest(info, w, None, bookmarks, timeout, omit)


def _check_delete_preconditions(info: ResourceInfo, old: Stored, opts: dict) -> None:
    """DeleteOptions.preconditions against the stored object (storage.Preconditions.Check):
    409 naming the Kind, with the two values."""
    ometa = old.obj["metadata"]
    name = ometa["name"]
    pre = opts.get("preconditions") or {}
    if pre.get("uid") and pre["uid"] != ometa["uid"]:
        raise errors.conflict(
            info.group,
            info.kind,
            name,
            f"Precondition failed: UID in precondition: {pre['uid']}, UID in object meta: "
            f"{ometa['uid']}",
        )
    if pre.get("resourceVersion") and pre["resourceVersion"] != ometa["resourceVersion"]:
        raise errors.conflict(
            info.group,
            info.kind,
            name,
            f"Precondition failed: ResourceVersion in precondition: {pre['resourceVersion']}, "
            f"ResourceVersion in object meta: {ometa['resourceVersion']}",
        )


class _Pristine:
    """A request's object for each attempt of a write: the object itself the first time, then
    a fresh copy of it as it was sent (``DefaultUpdatedObjectInfo.UpdatedObject`` copies the
    request's object on each call, since the strategy changes what it is given).

    Most writes take one attempt, so what is kept for a retry must be cheap to make: a marshal
    snapshot costs about a third of a deep copy, and is only decoded when a retry comes. An
    object marshal cannot hold (a timestamp YAML decoded in an apply) is deep-copied instead.
    """

    __slots__ = ("_obj", "_frozen", "_copy", "_taken")

    def __init__(self, obj: Any) -> None:
        self._obj = obj  # handed to the first attempt, which may change it
        self._taken = False
        self._copy: Any = None
        try:
            self._frozen: bytes | None = marshal.dumps(obj)
        except ValueError:
            self._frozen = None
            self._copy = _copy_json(obj)

    def take(self) -> Any:
        """The object for the next attempt (owned by it)."""
        if not self._taken:
            self._taken = True
            return self._obj
        if self._frozen is not None:
            return marshal.loads(self._frozen)
        return _copy_json(self._copy)


def _copy_json(value: Any) -> Any:
    """A deep copy of decoded JSON (dicts and lists; their leaves are immutable or shared)."""
    if isinstance(value, dict):
        return {k: _copy_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy_json(v) for v in value]
    return value


def _versioned(info: ResourceInfo, obj: dict | None) -> dict | None:
    """A stored object as admission sees it: at the request's version (a shallow copy)."""
    if obj is None:
        return None
    conv = info.converter
    out = conv.from_storage(obj) if conv is not None and conv.converts_output else dict(obj)
    out["apiVersion"] = info.group_version
    return out


def _options(kind: str, query: dict, body: dict | None = None) -> dict:
    """The CreateOptions, UpdateOptions or DeleteOptions an admission request carries, as the
    handler decoded them from the query (a patch's PatchOptions become UpdateOptions, or
    CreateOptions when an apply creates: patchToUpdateOptions, patchToCreateOptions)."""
    out: dict[str, Any] = {"kind": f"{kind}Options", "apiVersion": "meta.k8s.io/v1"}
    if kind == "Delete":
        out.update({k: v for k, v in (body or {}).items() if k not in ("kind", "apiVersion")})
        return out
    if query.get("dryRun"):
        out["dryRun"] = [query["dryRun"]]
    for key in ("fieldManager", "fieldValidation"):
        if query.get(key):
            out[key] = query[key]
    return out


def _check_namespace_unchanged(info: ResourceInfo, obj: dict, ns: str) -> None:
    """rest.EnsureObjectNamespaceMatchesRequestNamespace, after a webhook's patch."""
    meta = obj["metadata"]
    if not info.namespaced:
        meta.pop("namespace", None)
        return
    if meta.get("namespace", ns) != ns:
        raise errors.bad_request(
            "the namespace of the provided object does not match the namespace sent on the request"
        )
    meta["namespace"] = ns


def _decode_patch(ptype: str, raw: bytes) -> Any:
    """A PATCH body: JSON, or for apply YAML (of which JSON is the common case, parsed first)."""
    try:
        return json.loads(raw)
    except ValueError as e:
        if ptype != patches.APPLY:
            raise errors.bad_request(f"error decoding patch: {e}") from None
    import yaml

    try:
        return yaml.safe_load(raw)
    # any exception: every decode failure is the client's
    except Exception as e:
        raise errors.bad_request(f"error decoding YAML: {e}") from None


def _patch_force(ptype: str, query: dict) -> bool:
    """ValidatePatchOptions: apply needs a fieldManager; force is for apply only."""
    force = query.get("force")
    causes = []
    if ptype == patches.APPLY:
        if not query.get("fieldManager"):
            causes.append(errors.field_required("fieldManager", "is required for apply patch"))
    elif force is not None:
        causes.append(errors.field_forbidden("force", "may not be specified for non-apply patch"))
    if causes:
        raise errors.invalid("meta.k8s.io", "PatchOptions", "", causes)
    # strconv.ParseBool's true spellings
    return force in ("1", "t", "T", "true", "TRUE", "True")


def _check_apply_name(body: dict, name: str) -> None:
    """checkName: the applied object must be the one on the URL (400, not a create of another)."""
    meta = body.get("metadata")
    given = meta.get("name") if isinstance(meta, dict) else None
    if given and given != name:
        raise errors.bad_request(
            f"the name of the object ({given}) does not match the name on the URL ({name})"
        )


def _validate_watch_options_v1_24(rv_text: str, match: str, cont: str) -> None:
    """ValidateListOptions of v1.24 (before WatchList) for a watch: resourceVersionMatch is
    forbidden outright, so the WatchList request (with resourceVersion "") gets two causes."""
    if not match:
        return
    causes = [
        errors.field_forbidden(
            "resourceVersionMatch", "resourceVersionMatch is forbidden for watch"
        ),
        *_rv_match_needs(rv_text, cont),
    ]
    raise errors.invalid("meta.k8s.io", "ListOptions", "", causes)


def _rv_match_needs(rv_text: str, cont: str) -> list:
    """The causes ValidateListOptions gives a resourceVersionMatch without a resourceVersion,
    or beside a continue token (shared by the list check and v1.24's watch check)."""
    causes = []
    if not rv_text:
        causes.append(
            errors.field_forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden unless resourceVersion is provided",
            )
        )
    if cont:
        causes.append(
            errors.field_forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden when continue is provided",
            )
        )
    return causes


def _validate_list_options(rv_text: str, match: str, cont: str, query: dict) -> None:
    """ValidateListOptions (meta/internalversion/validation): every problem, one 422."""
    causes = []
    if match:
        causes += _rv_match_needs(rv_text, cont)
        if match not in ("Exact", "NotOlderThan"):
            causes.append(
                errors.field_not_supported(
                    "resourceVersionMatch", match, ["Exact", "NotOlderThan", ""]
                )
            )
        if match == "Exact" and rv_text == "0":
            causes.append(
                errors.field_forbidden(
                    "resourceVersionMatch",
                    'resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
                )
            )
    if query.get("sendInitialEvents") in ("true", "1", "True"):
        causes.append(
            errors.field_forbidden("sendInitialEvents", "sendInitialEvents is forbidden for list")
        )
    if causes:
        raise errors.invalid("meta.k8s.io", "ListOptions", "", causes)


def _parse_resource_version(text: str, bad_request: bool) -> int:
    """The versioner's ParseResourceVersion (strconv.ParseUint).

    Its error is a 400 "invalid resource version: ..." where 1.36's list options are parsed
    (storage's listoptions, before the cache or etcd is asked), a bare 500 on 1.24.
    """
    problem = ""
    if not text.isdigit() or not text.isascii():
        problem = f'strconv.ParseUint: parsing "{text}": invalid syntax'
    elif int(text) >= 1 << 64:
        problem = f'strconv.ParseUint: parsing "{text}": value out of range'
    if not problem:
        return int(text)
    if bad_request:
        # storage.NewInvalidError of field.Invalid("resourceVersion", text, problem)
        invalid = f"resourceVersion: Invalid value: {errors.go_quote(text)}: {problem}"
        raise errors.bad_request(f"invalid resource version: {invalid}")
    raise errors.internal_error(problem)


def _json_kind(value: Any) -> str:
    """How encoding/json names a JSON value's type in an UnmarshalTypeError."""
    if isinstance(value, list):
        return "array"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "null"


def _okey(s: Stored) -> tuple[str, str]:
    m = s.obj["metadata"]
    return (m.get("namespace", ""), m["name"])
