"""OmniDocBench v1.6's end-to-end evaluation: the ``omnidocbench`` suite kind.

* `scoring`        -- OmniDocBench's per-page scoring, reimplemented: `score_page`, `leaderboard`
* `reference`      -- OmniDocBench's own code from a user's checkout (``reference``): one
                      page's text_edit, formula_edit, reading_order_edit
* `matched_block`  -- `MatchedBlock`, one truth/prediction pair, for the ``blocks`` view
* `suite`          -- `OmniDocBenchSuite`: pages x systems as tests, a parser's stages
* `suite_pages`    -- the annotation file, page labels, predictions, a page image as a stage
* `suite_analysis` -- the ``omnidocbench`` analysis: the leaderboard overall and per page group
* `html`, `paper`  -- the page's blocks view, the analysis drawn, the leaderboard's paper table
"""
