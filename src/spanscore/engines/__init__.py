"""Engines that run the streaming counts elsewhere than in this process.

``dask_engine.evaluate_dask`` maps ``stream.count_chunk`` over a Dask distributed cluster. It needs
the optional extra: ``pip install 'spanscore[dask]'``; importing this package does not import Dask.
"""
