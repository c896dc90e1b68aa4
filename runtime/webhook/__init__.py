"""Admission webhooks served by the runtime: controller-runtime's ``pkg/webhook`` twin.

- ``admission``: AdmissionReview in and out, the defaulting and validating handlers
  (``pkg/webhook/admission``);
- ``jsonpatch``: the RFC 6902 patch a defaulter answers with (gomodules.xyz/jsonpatch);
- ``server``: HTTPS, one path per webhook, controller-runtime's webhook metrics, the
  readiness check (``pkg/webhook``);
- ``options``: the server the process flags ask for (kubebuilder's scaffold's
  ``webhook.NewServer``);
- ``selfmanaged`` and ``certgen``: a CA and serving certificate the process makes and rotates
  itself, with the CA written into its own webhook configurations (open-policy-agent's
  cert-controller ``rotator``, without its Secret).
"""
