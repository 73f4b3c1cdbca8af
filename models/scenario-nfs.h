/* scenario-nfs.h — [nfs NAME] groups: one NFS client reading one file that
 * an nfsd thread pool serves from a device (sim/sim-nfs.h).
 *
 * Keys (defaults in brackets):
 *   device            the [device NAME] holding the file [the only device]
 *   size              the file's size (read whole by the client) [required]
 *   offset            where the file begins on the device [0]
 *   threads           nfsd threads [8, rpc.nfsd's default of the era]
 *   rsize             bytes per READ, 4 KiB .. 1 MiB in whole pages [the
 *                     server's preferred size, scenario_nfs_default_rsize]
 *   bs                the client reader's read() size (dd bs) [1MiB]
 *   slots             RPC slot table entries [16, RPC_DEF_SLOT_TABLE]
 *   client_readahead  the client's max readahead [rsize x 15, NFS_MAX_READAHEAD]
 *   link              link rate, e.g. 1Gbit/s or 125MB/s [1Gbit/s]
 *   rtt               round-trip time [200us]
 *   mtu               [1500]
 *   cpu_recv, cpu_rpc, cpu_page   nfsd CPU per RPC received, per RPC
 *                     served and per page of reply [5us, 15us, 1us]
 *   raparams          nfsd's readahead-parameter cache [true]
 *   start             when the client starts reading [0]
 */
#pragma once

#include <glib.h>
#include "sim/sim-nfs.h"

G_BEGIN_DECLS

typedef struct {
  char        *name;
  char        *device;        /* NULL: the scenario's only device */
  guint        device_index;  /* set by the scenario once devices are known */
  guint64      offset_bytes;
  SimNfsConfig cfg;           /* cfg.name is @name */
} ScenarioNfs;

/* The rsize a 2.6.19-2.6.27 client mounts with when not given one, for a
 * Linux server of @server_memory_bytes: the server's FSINFO rtpref, which
 * nfsd3_proc_fsinfo sets to svc_max_payload(), i.e. nfsd_max_blksize;
 * nfsd_create_serv chooses that from memory when rpc.nfsd sets none
 * (1 MiB from 4 GiB up, "only uses 32K on 128M machines"; fs/nfsd/
 * nfssvc.c since 2.6.19), and nfs_server_set_fsinfo (fs/nfs/client.c)
 * takes rtpref for an rsize of 0.  Before 2.6.19 nfsd offered
 * NFSSVC_MAXBLKSIZE, 32 KiB: set rsize = 32KiB for such a server. */
guint64      scenario_nfs_default_rsize (guint64 server_memory_bytes);

/* Parse group @group ("nfs NAME"), its defaults for a server of
 * @server_memory_bytes; errors name the group and key. */
ScenarioNfs *scenario_nfs_load (GKeyFile *kf, const char *group, guint64 server_memory_bytes,
                                GError **error);
void         scenario_nfs_free (ScenarioNfs *n);

G_DEFINE_AUTOPTR_CLEANUP_FUNC (ScenarioNfs, scenario_nfs_free)

G_END_DECLS
