"""Tables of measurements and kernels: CSV reading (`csv_table`), kernel tables (`kernel_table`) and timing tables
(`timings`)."""
