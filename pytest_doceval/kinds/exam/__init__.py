"""The engine of the ``exam`` kind (seed 001): multiple-choice questions asked of (model, track)
systems, answers parsed, accuracy and its statistics computed from the rows.

- `pytest_doceval.kinds.exam.questions`: `load_questions` reads and validates ``questions.jsonl``.
- `pytest_doceval.kinds.exam.prompts`: the tracks A, B1, B2, C, their versioned prompts and hashes,
  `build_messages`, `scoring_id`.
- `pytest_doceval.kinds.exam.answers`: the answer parsers ``seed-001`` and ``robust-v1``.
- `pytest_doceval.kinds.exam.scoring`: one output scored into metrics, details and the answer view;
  the ``random`` system; `EXAM_METRICS`.
- `pytest_doceval.kinds.exam.analyses`: `EXAM_ANALYSES`, the suite-level tables, reading the rows
  through `pytest_doceval.kinds.exam.table`; the blocked ANOVA is
  `pytest_doceval.stats.anova.additive_anova`.

Nothing is imported here: the plugin loads the package in every pytest run.
"""
