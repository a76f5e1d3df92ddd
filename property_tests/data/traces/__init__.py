"""Sample conversation traces (OpenAI chat format), shipped as
``vistalab.examples.traces``; the tests replay them."""
