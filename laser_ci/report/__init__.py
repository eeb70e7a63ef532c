"""Stage 5, report: an estimate result (a JSON-able dict) in, text out.

``render``: the terminal table, JSON and Markdown of ``laser-ci estimate``; ``comment``: the
pull-request comment and job summary the Action posts, rendered with ``diff`` (head against
base), ``tables``, ``assumptions``, ``cells``, ``context`` and ``limits``; ``jobs``: what both show of a job
(labels without raw ``${{ }}``, what only the run knows in words, groups of a job's
instances, workflows that only run when called under their callers); ``markdown`` and
``plain``: untrusted text made safe for Markdown and for a terminal or CI log; ``progress``:
the stages of a long command on stderr.
"""
