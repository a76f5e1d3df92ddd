"""The vista-lab test suite, shipped in the wheel as ``vistalab.tests``.

From a checkout: ``python -m pytest``. From an installed wheel, anywhere:
``python -m pytest --pyargs vistalab.tests`` (tests that need the repository or
the paper's LaTeX skip and say what to provide: a clone, or
``VISTA_LAB_PAPER=/path/to/paper.tex``).
"""
