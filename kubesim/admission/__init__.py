"""Admission webhooks: kubesim calls Mutating- and ValidatingWebhookConfigurations' webhooks.

Twin of k8s.io/apiserver/pkg/admission/plugin/webhook (mutating, validating, generic, request,
errors) and of k8s.io/apiserver/pkg/util/webhook (the client). kubesim/README.md says what is
called, in what order, and what is left out.
"""
