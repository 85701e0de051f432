"""Gang scheduling with the time-slot matrix of Zhou, Brent and Walsh.

Processors are a one-dimensional array of a power-of-two size; each row of the matrix
is a time slot. Jobs get buddy-aligned blocks (:mod:`.buddy`), the workload tree
(:mod:`.tree`) says where every processor still has an idle slot, the matrix
(:mod:`.matrix`) keeps who runs where and re-packs by legal shifts, the schemes
(:mod:`.schemes`) are BC, BR, BRMS and BRMMS of the paper's section 4.1, and the
rotation (:mod:`.rotation`) runs the rows slot by slot. Pure: time is an argument.
"""

from berth.core.gang.buddy import block_size
from berth.core.gang.matrix import Matrix
from berth.core.gang.rotation import Rotation, SlotReport
from berth.core.gang.schemes import SCHEMES, GangScheduler

__all__ = ["SCHEMES", "GangScheduler", "Matrix", "Rotation", "SlotReport", "block_size"]
