"""Stage 1, parse: workflow YAML in, the domain model out.

Enters: workflow files (bytes, from disk or a commit). Leaves: :class:`Workflow` objects whose
:class:`JobInstance` items are every job GitHub would run (one per matrix combination), with
display names, resolved ``needs`` and static expressions evaluated; problems as
:class:`ReadError` lines naming the file and line.

Modules: ``yamlload`` (YAML as GitHub reads it), ``files`` (the file source, ``./`` and
``$/`` references, the checkout's root and ``origin``), ``schema`` (GitHub's workflow
schema), ``parse`` (workflows, reusable workflows, composite actions), ``run_context``
(the ``inputs`` and ``github`` a run knows before it starts), ``matrix`` (strategy
expansion), ``expressions`` (the one ``${{ }}`` evaluator: GitHub's grammar over the
contexts known before a run, an explicit unknown for the rest) with ``values``,
``grammar`` and ``references`` (plain references of the job text), ``names`` (display
names and the parts only the run knows), ``runtime_matrix``
(the instances of a matrix computed at run time, from the job's latest runs), ``graph``
(``needs`` and the critical path), ``repo_profile`` (what the checkout holds), ``model``
(the dataclasses).
"""
