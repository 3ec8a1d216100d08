"""OmniDocBench v1.6's end-to-end evaluation: the ``omnidocbench`` suite kind.

* `scoring`        -- OmniDocBench's per-page scoring, reimplemented: `score_page`, `leaderboard`
* `suite`          -- `OmniDocBenchSuite`: pages x systems as tests, a parser's stages
* `suite_pages`    -- the annotation file, page labels, predictions, a page image as a stage
* `suite_analysis` -- the ``omnidocbench`` analysis: the leaderboard overall and per page group
* `html`, `paper`  -- the page's blocks view, the analysis drawn, the leaderboard's paper table
"""
