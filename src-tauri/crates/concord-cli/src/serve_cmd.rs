//! `concord serve …`: experts rate from a browser. `serve` starts the server (its first line on
//! stdout is `serving on http://HOST:PORT`, or `https://…`); `invite --rater NAME` prints a
//! one-time link at which the expert sets their web passphrase (refused for a name the login
//! could not tell from another expert's; `--lead NAME --contact TEXT` keep whom the pages name
//! as the study lead and how to reach them); `revoke --rater NAME` ends their
//! web access (every session of theirs ends at its next request); `status` lists the experts'
//! web access. Randomness for tokens and salts is the operating system's.

use crate::study_cmd::{open_study, StudyCmdError};
use clap::{Args, Subcommand};
use concord_core::app::web;
use concord_core::base::clock::{iso_utc, SystemClock};
use concord_core::base::text::quoted;
use concord_core::workflow::web_access::WebAccessError;
use concord_web::{ServeError, ServeOptions, TlsFiles};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Where the browser build of the UI is looked for when `--ui` is not given.
pub const UI_ENV: &str = "CONCORD_WEB_UI";

#[derive(Debug, thiserror::Error)]
pub enum ServeCmdError {
    #[error(transparent)]
    Study(#[from] StudyCmdError),
    #[error(transparent)]
    Access(#[from] WebAccessError),
    #[error(transparent)]
    Serve(#[from] ServeError),
    #[error("--tls-cert and --tls-key go together")]
    HalfTls,
    #[error("could not print JSON: {0}")]
    Json(#[from] serde_json::Error),
}

#[derive(Args, Debug)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ServeArgs {
    #[command(subcommand)]
    command: Option<ServeCommand>,
    /// The address to listen on; anything but loopback needs --tls-cert/--tls-key.
    #[arg(long, default_value = "127.0.0.1:8420")]
    bind: SocketAddr,
    /// The TLS certificate chain (PEM).
    #[arg(long, value_name = "FILE")]
    tls_cert: Option<PathBuf>,
    /// The TLS private key (PEM).
    #[arg(long, value_name = "FILE")]
    tls_key: Option<PathBuf>,
    /// A reverse proxy on this machine terminates TLS (cookies are marked Secure); loopback only.
    #[arg(long)]
    behind_proxy: bool,
    /// A host name browsers reach the server by (repeatable); requests naming any other host
    /// than the server's address (or localhost on loopback) are refused.
    #[arg(long, value_name = "NAME")]
    public_name: Vec<String>,
    /// The browser build of the UI (default: $CONCORD_WEB_UI, then /usr/share/concord/web, then
    /// the source tree's ui/dist-web).
    #[arg(long, value_name = "DIR")]
    ui: Option<PathBuf>,
}

#[derive(Subcommand, Debug)]
enum ServeCommand {
    /// Print a one-time link at which the expert sets their web passphrase.
    Invite {
        #[arg(long, value_name = "NAME")]
        rater: String,
        /// The address raters reach the server at.
        #[arg(long, value_name = "URL", default_value = "http://127.0.0.1:8420")]
        base_url: String,
        /// Days the link stands.
        #[arg(long, value_name = "DAYS", default_value_t = web::DEFAULT_INVITATION_DAYS)]
        expires: u32,
        /// The study lead's name as the invitation and login pages show it (kept for later
        /// invitations).
        #[arg(long, value_name = "NAME")]
        lead: Option<String>,
        /// How invited experts reach the study lead (an e-mail address, a phone number), shown
        /// beside the lead's name (kept for later invitations).
        #[arg(long, value_name = "TEXT")]
        contact: Option<String>,
    },
    /// End the expert's web access: their passphrase, open invitations and sessions.
    Revoke {
        #[arg(long, value_name = "NAME")]
        rater: String,
    },
    /// Every expert's web access: passphrase set, last login, lock-out, open invitations.
    Status,
}

fn ui_dir(given: Option<&Path>) -> PathBuf {
    if let Some(dir) = given {
        return dir.to_path_buf();
    }
    if let Some(dir) = std::env::var_os(UI_ENV) {
        return PathBuf::from(dir);
    }
    let installed = PathBuf::from("/usr/share/concord/web");
    if installed.join("index.html").is_file() {
        return installed;
    }
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../ui/dist-web")
}

pub fn run(args: &ServeArgs, db: Option<&Path>, json: bool) -> Result<String, ServeCmdError> {
    match &args.command {
        Some(ServeCommand::Invite {
            rater,
            base_url,
            expires,
            lead,
            contact,
        }) => {
            let mut study = open_study(db)?;
            let invitation = web::invite_from(
                &mut study,
                rater,
                *expires,
                lead.as_deref(),
                contact.as_deref(),
                &mut rand::rngs::OsRng,
            )?;
            let link = format!(
                "{}/invite#{}",
                base_url.trim_end_matches('/'),
                invitation.token
            );
            if json {
                let doc = serde_json::json!({
                    "rater": invitation.rater.name,
                    "link": link,
                    "expires_at": iso_utc(invitation.expires_at),
                });
                return Ok(format!("{}\n", serde_json::to_string_pretty(&doc)?));
            }
            Ok(format!(
                "{link}\nOne-time link for {} (valid until {}); send it to them privately.\n",
                quoted(&invitation.rater.name),
                iso_utc(invitation.expires_at)
            ))
        }
        Some(ServeCommand::Revoke { rater }) => {
            let mut study = open_study(db)?;
            let had = web::revoke(&mut study, rater)?;
            Ok(if had {
                format!("Web access of {} revoked.\n", quoted(rater))
            } else {
                format!("{} had no web access; recorded anyway.\n", quoted(rater))
            })
        }
        Some(ServeCommand::Status) => {
            let study = open_study(db)?;
            let access = web::access(&study)?;
            if json {
                return Ok(format!("{}\n", serde_json::to_string_pretty(&access)?));
            }
            let mut out = String::from(
                "expert\tconnected\tprogress\tpassphrase set\tlast login\tlocked until\topen invitations\n",
            );
            for a in access {
                out.push_str(&format!(
                    "{}\t{}\t{}/{}\t{}\t{}\t{}\t{}\n",
                    quoted(&a.name),
                    if a.connected { "yes" } else { "no" },
                    a.completed,
                    a.total,
                    if a.has_login { "yes" } else { "no" },
                    a.last_login.map(iso_utc).unwrap_or_else(|| "-".into()),
                    a.locked_until.map(iso_utc).unwrap_or_else(|| "-".into()),
                    a.open_invitations
                ));
            }
            Ok(out)
        }
        None => {
            let tls = match (&args.tls_cert, &args.tls_key) {
                (Some(cert), Some(key)) => Some(TlsFiles {
                    cert: cert.clone(),
                    key: key.clone(),
                }),
                (None, None) => None,
                _ => return Err(ServeCmdError::HalfTls),
            };
            let mut options = ServeOptions::new(args.bind, ui_dir(args.ui.as_deref()));
            options.tls = tls;
            options.behind_proxy = args.behind_proxy;
            options.public_names = args.public_name.clone();
            // Refuse before the study is opened.
            options.check()?;
            let study = open_study(db)?;
            let running = concord_web::start(
                study,
                options,
                Arc::new(SystemClock),
                Box::new(rand::rngs::OsRng),
            )?;
            {
                use std::io::Write as _;
                let mut out = std::io::stdout().lock();
                let _ = writeln!(out, "serving on {}", running.url());
                let _ = out.flush();
            }
            running.wait();
            Ok(String::new())
        }
    }
}
