"""What happens at a compaction: its records (records.py: PreCompact, PostCompact, Gemini CLI's PreCompress note), the
brief a compressed model request carries (request.py: Gemini CLI's BeforeModel), and the capture of what the
transcript says happened since the last checkpoint (capture.py), its secrets taken out first (redaction.py), and the
marks that say which sessions had a compaction their brief has not yet followed (marks.py)."""
