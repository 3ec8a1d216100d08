"""The engine of the ``exam`` kind (seed 001): multiple-choice questions asked of (model, track)
systems, answers parsed, accuracy and its statistics computed from the rows.

- `pytest_doceval.exam.questions`: `load_questions` reads and validates ``questions.jsonl``.
- `pytest_doceval.exam.prompts`: the tracks A, B1, B2, C, their versioned prompts and hashes,
  `build_messages`, `scoring_id`.
- `pytest_doceval.exam.answers`: the answer parsers ``seed-001`` and ``robust-v1``.
- `pytest_doceval.exam.scoring`: one output scored into metrics, details and the answer view;
  the ``random`` system; `EXAM_METRICS`.
- `pytest_doceval.exam.analyses`: `EXAM_ANALYSES`, the suite-level tables, reading the rows
  through `pytest_doceval.exam.table`; `pytest_doceval.exam.anova` is the blocked ANOVA.

Nothing is imported here: the plugin loads the package in every pytest run.
"""
