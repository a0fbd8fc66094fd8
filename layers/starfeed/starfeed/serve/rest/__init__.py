"""The REST API for programs (docs/design.md#rest-api) under /api/v1: feeds, entries and raw payloads, with
its OpenAPI document generated from the routes and models by Powertools' data validation. On
AWS every route needs IAM authorization (SigV4); under `make run`, a loopback client."""
