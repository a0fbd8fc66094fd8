"""The local stack: moto in server mode, resources created from template.yaml, and the handlers
driven exactly as Lambda drives them. Development only: never packaged into the layer."""
