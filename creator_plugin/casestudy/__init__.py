"""Case studies on real learned representations.

:mod:`creator_plugin.casestudy.llm` reproduces the CREATOR paper's language-model
case study offline (``creator casestudy llm``; needs the ``[llm]`` extra).
Nothing here is imported by ``import creator_plugin``, and nothing here imports
torch until an encoder is loaded.
"""
