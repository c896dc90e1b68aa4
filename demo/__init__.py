"""``make demo`` / ``python -m demo``: the controller at work against kubesim, narrated.

No client-go twin: a guided tour for a reader of the code. It lives outside ``controller/``
because it starts kubesim, the project's test API server, and nothing installed as the
controller may import that. It is not part of the installed distribution either (pyproject's
package list leaves it out): run it from a checkout, where ``python -m demo`` finds it in the
current directory. ``demo.__main__`` tells the story; ``demo.narration`` turns what the
controller does into its lines.
"""
