"""The GitHub surfaces: the Action, run history from the API, and ``collect``.

``action`` reads its settings once and runs the pipeline on a pull request's head and base;
``refs`` reads a commit's files through the API (never a checkout, never executed);
``comments`` keeps the one sticky comment; ``runner_io`` writes annotations, outputs and the
job summary; ``history`` fetches a branch's earlier runs for warm predictions; ``collect``
gathers a repository's history into the data format training and ``--history`` read.
"""
