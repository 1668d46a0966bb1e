"""What a memory record is: its emotions, the bounds of its fields, and how it is normalised and (de)serialised."""
