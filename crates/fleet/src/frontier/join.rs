//! Joining (or creating) a fleet's crawl: the crawl's record checked, this worker listed,
//! the scripts loaded.

use super::*;

/// `hostname:pid`, how a worker is listed in `--status`.
fn worker_name() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .or_else(|| std::env::var("HOSTNAME").ok())
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "worker".into());
    format!("{host}:{}", std::process::id())
}

impl<C: FleetConnection> FleetFrontier<C> {
    /// Joins (or creates) the crawl `layout` names, over `con` (`url`
    /// names the server in errors).
    pub async fn open(
        mut con: C,
        url: &str,
        layout: Layout,
        politeness: Politeness,
        config: FrontierConfig,
        fleet: FleetConfig,
    ) -> Result<FleetFrontier<C>, FrontierError> {
        check_record(&mut con, url, &layout, &config).await?;
        Ok(Self::new(con, url, layout, politeness, (config, fleet)))
    }

    /// A worker's frontier over a crawl whose record it has checked.
    fn new(
        con: C,
        url: &str,
        layout: Layout,
        politeness: Politeness,
        (config, fleet): (FrontierConfig, FleetConfig),
    ) -> FleetFrontier<C> {
        let partitions = layout.partitions();
        let seen = SeenCache::new(fleet.seen_cache, con.incarnation());
        FleetFrontier {
            seen,
            con,
            url: url.to_owned(),
            keyer: Keyer::new(config.key_mode),
            layout,
            config,
            fleet,
            politeness,
            scripts: Scripts::new(),
            flights: HashMap::new(),
            begun: HashMap::new(),
            stale: 0,
            probes: 0,
            probed: 0,
            cursor: 0,
            due: std::collections::VecDeque::new(),
            idle: Next::Empty,
            answers: vec![Next::Empty; partitions as usize],
            idle_stale: false,
            probe_at: None,
            probe_every: PROBE_EVERY,
            stats_cache: None,
            stats_stale: false,
            skipped_at: None,
            skipped_counts: vec![0; partitions as usize],
            part_counts: Vec::new(),
            stats_cursor: 0,
            posts: Default::default(),
            board_seen: None,
            board_full_at: None,
            board_incarnation: None,
            lapse_at: vec![0; partitions as usize],
            skipped_owed: Default::default(),
            skipped_full: false,
            worker: worker_name(),
            offset: ClockOffset::default(),
            last_now: UnixMillis::EPOCH,
            spare_ids: 0,
            pending: Vec::new(),
            outbox: Outbox::default(),
            touched: std::collections::BTreeSet::new(),
            beat_at: None,
            asked_at: std::time::Instant::now(),
            lastmods_out: Vec::new(),
        }
    }

    /// Loads every script (after the server lost them: a restart).
    pub(super) async fn load_scripts(&mut self) -> Result<(), FrontierError> {
        for script in self.scripts.all() {
            script
                .prepare_invoke()
                .load_async(&mut self.con)
                .await
                .map_err(|e| store_err(&self.url, e))?;
        }
        Ok(())
    }
}

/// The crawl's record on the server, written if it is new: its
/// partitions, key mode and store format must be this worker's.
async fn check_record<C: FleetConnection>(
    con: &mut C,
    url: &str,
    layout: &Layout,
    config: &FrontierConfig,
) -> Result<(), FrontierError> {
    let meta = layout.meta_key();
    let wanted = serde_json::to_string(&config.key_mode)
        .unwrap_or_default()
        .trim_matches('"')
        .to_owned();
    let mut pipe = redis::pipe();
    pipe.cmd("HSETNX")
        .arg(&meta)
        .arg("partitions")
        .arg(layout.partitions())
        .ignore();
    pipe.cmd("HSETNX")
        .arg(&meta)
        .arg("key_mode")
        .arg(&wanted)
        .ignore();
    // A crawl created before formats were numbered is in the first.
    pipe.cmd("HSETNX")
        .arg(&meta)
        .arg("format")
        .arg(STORE_FORMAT)
        .ignore();
    pipe.cmd("HMGET")
        .arg(&meta)
        .arg("partitions")
        .arg("key_mode")
        .arg("format");
    let (stored, mode, format): (u32, String, String) = pipe
        .query_async::<Vec<(u32, String, String)>>(con)
        .await
        .map_err(|e| store_err(url, e))?
        .into_iter()
        .next()
        .ok_or_else(|| FrontierError::Corrupt {
            store: url.to_owned(),
            what: "no answer to HMGET".into(),
        })?;
    if format != STORE_FORMAT.to_string() {
        return Err(FrontierError::Corrupt {
            store: url.to_owned(),
            what: format!(
                "crawl {} keeps its frontier in store format {format:?}; this worker reads and \
                 writes format {STORE_FORMAT}: join it with a mannerly of that format",
                layout.crawl(),
            ),
        });
    }
    if stored != layout.partitions() {
        return Err(FrontierError::Corrupt {
            store: url.to_owned(),
            what: format!(
                "crawl {} was created with {stored} partitions, not {}: join it with that many",
                layout.crawl(),
                layout.partitions()
            ),
        });
    }
    if mode != wanted {
        return Err(FrontierError::KeyMode {
            store: url.to_owned(),
            stored: mode,
            wanted,
        });
    }
    Ok(())
}
