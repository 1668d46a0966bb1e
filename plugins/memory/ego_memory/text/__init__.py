"""Text as recall and privacy read it: languages and segmentation, query terms and equivalents, keywords,
wording, the last introspection's quote, and the private-content redactor and the summaries it guards."""
