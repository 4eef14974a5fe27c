//! `mannerly operator`: a crawler operator's published identity (Crawler
//! Best Practices): `kit` writes it from one description, `check` checks
//! anyone's.

use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use mannerly_botauth::crawler_page::Description;
use mannerly_botauth::identity_check::{check_identity, CheckOptions, Status};
use mannerly_botauth::jafar::{self, Jafar, Prefix};
use mannerly_botauth::UnixMillis;

#[derive(clap::Subcommand)]
pub enum OperatorCommand {
    /// Write a crawler's published identity from one description (TOML):
    /// its JAFAR ranges file, its page (how to block it, how data is used,
    /// whom to contact, its ranges linked), how to serve both, and the
    /// User-Agent naming the page.
    #[command(after_help = "Examples:\n  \
        mannerly operator kit crawler.toml --out site/\n\n\
        crawler.toml:\n  \
        token = \"ExampleBot\"\n  version = \"1.0\"\n  operator = \"Example Ltd\"\n  \
        page = \"https://example.com/bot\"\n  ranges_url = \"https://example.com/bot/ranges.json\"\n  \
        purpose = \"indexes recipes for Example Search.\"\n  \
        data_use = \"Search results only; never to train AI models.\"\n  \
        contact = \"mailto:bot@example.com\"\n  ranges = [\"192.0.2.0/24\", \"2001:db8:1::/48\"]\n  \
        # optional: renders = false, key_directory = \"https://...\", card = \"https://...\"")]
    Kit(KitArgs),
    /// Check any crawler's published identity against the Crawler Best
    /// Practices, from its User-Agent or its page's URL: the page, its
    /// client-ranges link, the JAFAR file, the key directory and card
    /// where linked. Exit status: 0 every practice met, 1 problems, 2 when
    /// something could not be checked.
    #[command(after_help = "Examples:\n  \
        mannerly operator check 'Mozilla/5.0 (compatible; ExampleBot/1.0; +https://example.com/bot)'\n  \
        mannerly operator check https://example.com/bot --token ExampleBot --json")]
    Check(CheckArgs),
}

#[derive(clap::Args)]
pub struct KitArgs {
    /// The crawler's description (TOML; see the example below).
    description: PathBuf,
    /// Where to write the kit (created if missing).
    #[arg(long, value_name = "DIR")]
    out: PathBuf,
}

#[derive(clap::Args)]
pub struct CheckArgs {
    /// A User-Agent naming its page, or the page's URL.
    subject: String,
    /// The product token to look for (when SUBJECT is a URL).
    #[arg(long, value_name = "TOKEN")]
    token: Option<String>,
    /// Fetch http URLs too (https only by default).
    #[arg(long)]
    allow_http: bool,
    /// Send every request through this proxy.
    #[arg(long, value_name = "URL", value_parser = crate::crawl::proxy_value)]
    proxy: Option<String>,
    /// Where answers are kept, so no URL is asked for more than hourly
    /// [default: ~/.cache/mannerly/identity].
    #[arg(long, value_name = "DIR")]
    cache: Option<PathBuf>,
    /// Print one JSON document.
    #[arg(long)]
    json: bool,
}

pub fn operator(cmd: OperatorCommand) -> Result<u8> {
    match cmd {
        OperatorCommand::Kit(a) => kit(a),
        OperatorCommand::Check(a) => check(a),
    }
}

fn kit(a: KitArgs) -> Result<u8> {
    let text = std::fs::read_to_string(&a.description)
        .with_context(|| format!("cannot read {}", a.description.display()))?;
    let d: Description = toml::from_str(&text)
        .with_context(|| format!("{}: not a crawler description", a.description.display()))?;
    let mut problems = d.problems();
    let mut prefixes = Vec::new();
    for r in &d.ranges {
        match r.parse::<ipnet::IpNet>() {
            Ok(net) if net.trunc() != net => problems.push(format!(
                "ranges: {r} has host bits set (the network is {})",
                net.trunc()
            )),
            Ok(net) => match jafar::non_public(&net) {
                Some(what) => problems.push(format!("ranges: {r} overlaps {what}")),
                None => prefixes.push(Prefix {
                    net,
                    services: vec![d.token.clone()],
                }),
            },
            Err(_) => problems.push(format!("ranges: {r:?} is not CIDR")),
        }
    }
    if !problems.is_empty() {
        bail!("{}:\n  {}", a.description.display(), problems.join("\n  "));
    }
    let now = UnixMillis::now();
    let j = Jafar {
        creation_time: UnixMillis(now.0 / 1000 * 1000),
        notes: Some(format!(
            "IP ranges of {}, run by {}: {}",
            d.token, d.operator, d.page
        )),
        prefixes,
    };
    std::fs::create_dir_all(&a.out)
        .with_context(|| format!("cannot create {}", a.out.display()))?;
    let write = |name: &str, body: &str| {
        let path = a.out.join(name);
        std::fs::write(&path, body).with_context(|| format!("cannot write {}", path.display()))
    };
    write("ranges.json", &j.to_json())?;
    write("index.html", &d.page_html())?;
    let serve = format!(
        "Serve index.html at {page}\n  with the header: Link: {link}\n\
Serve ranges.json at {ranges}\n  with the headers: Content-Type: {ct}\n                    Cache-Control: max-age=86400\n\
  and write it again at least every 24 hours (its creationTime), e.g. from cron:\n  \
mannerly operator kit {desc} --out {out}\n\
Crawl with: mannerly crawl --user-agent '{ua}' ...\n",
        page = d.page,
        link = d.link_header(),
        ranges = d.ranges_url,
        ct = jafar::content_type(),
        desc = a.description.display(),
        out = a.out.display(),
        ua = d.user_agent(),
    );
    write("SERVE.txt", &serve)?;
    println!(
        "wrote {}/{{index.html,ranges.json,SERVE.txt}}",
        a.out.display()
    );
    print!("{serve}");
    Ok(0)
}

fn check(a: CheckArgs) -> Result<u8> {
    let o = CheckOptions {
        allow_http: a.allow_http,
        proxy: a.proxy,
        cache: Some(a.cache.unwrap_or_else(mannerly_identity::identity_cache)),
        token: a.token,
        ..CheckOptions::default()
    };
    let runtime = tokio::runtime::Runtime::new().context("cannot start the async runtime")?;
    let r = runtime.block_on(check_identity(&a.subject, &o));
    if a.json {
        println!("{}", serde_json::to_string(&r)?);
        return Ok(r.exit_code());
    }
    println!(
        "{} ({})",
        r.page.as_deref().unwrap_or("no page"),
        r.token.as_deref().unwrap_or("no token")
    );
    for i in &r.items {
        let mark = match i.status {
            Status::Pass => "ok",
            Status::Problem => "PROBLEM",
            Status::NotChecked => "NOT CHECKED",
        };
        println!(
            "{mark:>11}  {}: {}",
            i.practice,
            crate::text::clean(&i.found)
        );
        for p in &i.problems {
            println!("             - {}", crate::text::clean(p));
        }
    }
    Ok(r.exit_code())
}
