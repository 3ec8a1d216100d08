"""The HTML toolkit a kind draws its own views with (``Suite.html_views``): a renderer takes
(view name, that view of each row of one case, the case's chunk) and returns one block per row.

Blocks are data, not HTML: the page's script draws their strings as text (``textContent``), so
a renderer puts plain text in them and never escapes it (an escaped ``&lt;`` would show as
such). Analyses (``Suite.html_analyses``) return ``markupsafe.Markup`` (see `analysis`).
"""

from pytest_doceval.html.codec import Chunk
from pytest_doceval.html.views import Block, ViewRenderer, table_block, text_block

__all__ = ["Block", "Chunk", "ViewRenderer", "table_block", "text_block"]
