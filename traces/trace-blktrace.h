/* trace-blktrace.h — the binary blktrace record layout shared by the reader
 * (trace-blktrace.c) and the writer (trace-blktrace-write.c), after the
 * kernel's include/uapi/linux/blktrace_api.h (Linux 6.18 and the version-8
 * "blk_io_trace2" series) and shared/reference/trace-formats.md §1.2-1.4.
 * Private to traces/.
 */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define BT_MAGIC            0x65617400u   /* "\0tae" with the version in the low byte */
#define BT_MAGIC_MASK       0xffffff00u
#define BT_VERSION_7        0x07
#define BT_VERSION_8        0x08
#define BT_HEADER_7         48            /* sizeof (struct blk_io_trace) */
#define BT_HEADER_8         64            /* sizeof (struct blk_io_trace2), 12 bytes padding */

/* Byte offsets inside the version-7 header (the version-8 header moves pid
 * before a 64-bit action, see bt_decode_header). */
enum {
  BT7_MAGIC = 0, BT7_SEQUENCE = 4, BT7_TIME = 8, BT7_SECTOR = 16, BT7_BYTES = 24,
  BT7_ACTION = 28, BT7_PID = 32, BT7_DEVICE = 36, BT7_CPU = 40, BT7_ERROR = 44,
  BT7_PDU_LEN = 46,
};
enum {
  BT8_MAGIC = 0, BT8_SEQUENCE = 4, BT8_TIME = 8, BT8_SECTOR = 16, BT8_BYTES = 24,
  BT8_PID = 28, BT8_ACTION = 32, BT8_DEVICE = 40, BT8_CPU = 44, BT8_ERROR = 48,
  BT8_PDU_LEN = 50,
};

/* Category bits, in the action word from bit 16 on (BLK_TC_SHIFT). */
enum {
  BT_TC_READ     = 1 << 0,
  BT_TC_WRITE    = 1 << 1,
  BT_TC_FLUSH    = 1 << 2,
  BT_TC_SYNC     = 1 << 3,
  BT_TC_QUEUE    = 1 << 4,
  BT_TC_REQUEUE  = 1 << 5,
  BT_TC_ISSUE    = 1 << 6,
  BT_TC_COMPLETE = 1 << 7,
  BT_TC_FS       = 1 << 8,
  BT_TC_PC       = 1 << 9,
  BT_TC_NOTIFY   = 1 << 10,
  BT_TC_AHEAD    = 1 << 11,
  BT_TC_META     = 1 << 12,
  BT_TC_DISCARD  = 1 << 13,
  BT_TC_DRV_DATA = 1 << 14,
  BT_TC_FUA      = 1 << 15,
};
#define BT_TC_SHIFT          16
/* Version 8 only: zone operations and write-zeroes, category bits 16-22. */
#define BT_TC2_ZONE_APPEND   (G_GUINT64_CONSTANT (1) << 16)
#define BT_TC2_WRITE_ZEROES  (G_GUINT64_CONSTANT (1) << 22)

/* Action codes (low byte of the action word; bit 8 flags a cgroup id). */
enum {
  BT_TA_QUEUE = 1, BT_TA_BACKMERGE, BT_TA_FRONTMERGE, BT_TA_GETRQ, BT_TA_SLEEPRQ,
  BT_TA_REQUEUE, BT_TA_ISSUE, BT_TA_COMPLETE, BT_TA_PLUG, BT_TA_UNPLUG_IO,
  BT_TA_UNPLUG_TIMER, BT_TA_INSERT, BT_TA_SPLIT, BT_TA_BOUNCE, BT_TA_REMAP,
  BT_TA_ABORT, BT_TA_DRV_DATA, BT_TA_ZONE_PLUG, BT_TA_ZONE_UNPLUG,
};
#define BT_TA_CGROUP         0x100

/* Notify codes (records with BT_TC_NOTIFY). */
enum {
  BT_TN_PROCESS = 0,
  BT_TN_TIMESTAMP = 1,
  BT_TN_MESSAGE = 2,
};

#define BT_COMM_LEN          16   /* TASK_COMM_LEN: the PROCESS payload */
#define BT_REMAP_LEN         16   /* struct blk_io_trace_remap, big-endian */

/* Kernel dev_t inside blktrace: 12-bit major, 20-bit minor. */
#define BT_MINOR_BITS        20
#define BT_MINOR_MASK        ((1u << BT_MINOR_BITS) - 1)

G_END_DECLS
