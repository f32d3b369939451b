"""Prefect flows over taskmint's stages. Prefect is imported here and nowhere else."""
