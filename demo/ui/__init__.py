"""``make demo-ui`` / ``python -m demo.ui``: the pipeline drawn live in a browser.

No client-go twin: a guided tour, beside ``python -m demo``'s narration. ``demo.ui.cluster``
starts kubesim and the controller and runs the controls, ``demo.ui.recorder`` turns the
controller's records into the page's entries, ``demo.ui.server`` serves the page
(``demo/ui/static``) and its JSON, ``demo.ui.words`` holds its English and Japanese words.
Like ``demo``, it is not installed: run it from a checkout.
"""
