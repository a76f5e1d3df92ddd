"""Example inputs shipped with vista-lab (``vistalab.examples``): sweep configs in
``sweeps/`` and, in ``vistalab.examples.traces``, sample conversation traces.
Copy them out with ``vista-lab examples DIR``."""
