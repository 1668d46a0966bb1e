"""In-process indexes beside the store: the dense and English matrices, the recent-vector cache, the public
passages, and the one-BLAS-thread guard their searches run under."""
