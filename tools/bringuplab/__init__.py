"""The parallel CPU bringup lab.

Data flows one way, a module per stage:
base -> tree -> kernel -> initramfs -> QEMU -> console log -> parsed
result -> report.
"""
