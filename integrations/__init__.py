"""memdeck inside agent frameworks.

* :mod:`memdeck.integrations.langgraph`: ``MemdeckStore``, a LangGraph ``BaseStore`` backed by memdeck
  (``pip install 'memdeck[langgraph]'``).
* :mod:`memdeck.integrations.openai_agents`: ``MemdeckSession``, an OpenAI Agents SDK session whose items are
  one memdeck session's episodes, and ``context_instructions`` (``pip install 'memdeck[openai-agents]'``).

Each module imports its framework; this package imports none, and memdeck's core never does.
"""

from __future__ import annotations

__all__: list[str] = []
