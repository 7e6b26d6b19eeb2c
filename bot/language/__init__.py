"""Reading questions: the parser and its extractors, values and units, the vocabulary, pasted
artifacts, intent, follow-ups in a thread, and Hugging Face model look-ups. Free of Slack."""
