/* commsim.h -- the public C API: the same operations the Lua lesson API exposes.
 *
 *   tensors        tensor.h   (cs_tensor_*)
 *   ranks, p2p     api.h      (cs_world_*, cs_send, cs_recv, cs_isend, cs_irecv, cs_wait, ...)
 *   events         events.h   (cs_event, cs_bus)
 *   the monitor    monitor.h  (the world model a front end draws)
 */
#ifndef COMMSIM_H
#define COMMSIM_H

#include "api.h"
#include "events.h"
#include "monitor.h"
#include "tensor.h"

#endif
