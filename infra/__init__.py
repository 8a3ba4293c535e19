"""CDK constructs of the AWS runtime, one module per capability; ``stack.py`` composes them."""
