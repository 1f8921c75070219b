"""Bridges from CREATOR results to causal-learn, DoWhy, networkx and pgmpy."""
