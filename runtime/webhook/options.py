"""The webhook server the process flags ask for.

kubebuilder twin: the scaffold's ``webhook.NewServer(webhook.Options{CertDir, CertName,
CertKey, TLSOpts})`` in cmd/main.go, with the certificate watched as there; the self-managed
mode is open-policy-agent/cert-controller's ``rotator.AddRotator`` in the same place.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from client.rest import Interface
from runtime.certwatcher import CertWatcher
from runtime.options import Options
from runtime.webhook.selfmanaged import CertRotator
from runtime.webhook.server import WebhookServer

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry

__all__ = ["new_webhook_server"]


def new_webhook_server(
    options: Options, rest: Interface, registry: CollectorRegistry | None
) -> WebhookServer | None:
    """The server of ``--webhook-bind-address`` (None: 0, off), not yet bound: the
    controllers ``register`` their webhooks on it, the manager starts it with the endpoints.
    The flags were checked (``runtime.flags.webhook_errors``): there is a certificate path or
    the self-managed mode."""
    address = options.webhook_bind_address
    if address is None:
        return None
    if options.webhook_cert_path:
        watcher = CertWatcher(
            os.path.join(options.webhook_cert_path, options.webhook_cert_name),
            os.path.join(options.webhook_cert_path, options.webhook_cert_key),
        )
        return WebhookServer(
            address, watcher, registry, starters=(watcher.start,), closers=(watcher.stop,)
        )
    configurations = [
        (resource, name)
        for resource, name in (
            ("mutatingwebhookconfigurations", options.webhook_mutating_configuration),
            ("validatingwebhookconfigurations", options.webhook_validating_configuration),
        )
        if name
    ]
    rotator = CertRotator(rest, list(options.webhook_cert_hosts), configurations)

    def begin() -> None:
        # the first certificate, and its CA written, before the first handshake
        rotator.ensure()
        rotator.start()

    return WebhookServer(address, rotator, registry, starters=(begin,), closers=(rotator.stop,))
