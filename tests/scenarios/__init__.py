"""The scenario corpus of the recovery runbook: each scenario a real git repository with a state,
real-shaped transcripts and pipelines, and the ledger it must give. transcripts.py writes the transcripts, each in its
harness's own folder layout under a temporary HOME."""
