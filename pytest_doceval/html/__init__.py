"""The HTML toolkit a kind draws its own views with (``Suite.html_views``): a renderer takes
(view name, that view of each row of one case, the case's chunk) and returns one block per row.
"""

from pytest_doceval.html.codec import Chunk
from pytest_doceval.html.views import Block, ViewRenderer, table_block, text_block

__all__ = ["Block", "Chunk", "ViewRenderer", "table_block", "text_block"]
