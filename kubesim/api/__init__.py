"""The API's vocabulary: Status errors, the served resources and discovery, version conversion.

Twins in k8s.io/apimachinery (pkg/api/errors, the scheme's conversion) and k8s.io/apiserver
(the RESTMapper and discovery handlers, apiextensions' CRD handler). Everything above the
storage speaks in these terms: an ``ApiError``, a ``ResourceInfo``, an object at a version.
"""
