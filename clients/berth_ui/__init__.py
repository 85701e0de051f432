"""The web dashboard's files: plain HTML, CSS and JavaScript modules in ``static/``.

Nothing is built: the browser loads the modules as they are, and the daemon serves them
at ``/ui`` (``berth.api.ui``). No third-party front-end code: the Gantt chart, the gang
matrix and the tables are drawn by the modules here with the DOM and SVG. The package
holds no Python beyond this docstring; the daemon finds it with ``importlib.resources``.
"""
