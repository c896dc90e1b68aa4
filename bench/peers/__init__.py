"""The peers of ``bench.e2e_bench``: the Foo controller written the way a Python user would
write it without this project, each run as a child process beside ours on the same kubesim."""
