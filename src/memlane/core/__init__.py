"""The core every layer may use: models, filters, configuration, validation, scope, ids, time,
JSON matching, vectors, errors, the change-set types, the provider registry and deadlines.
It imports nothing else of memlane."""
