//! The curated lists behind `LogsRefused`: apps whose logs are never read, whatever the person
//! allowed, because what they log (balances, card numbers, vault entries) is never worth the risk.
//!
//! Entries are Android package names or iOS bundle ids. A trailing `*` covers every id that starts
//! with what comes before it (so `keepass2android.*` covers the app and its no-network variant),
//! and a leading `*` covers every id that ends with what follows it. The lists are versioned: a
//! change to them bumps [`LOGS_REFUSED_VERSION`], so a person can tell which list refused an app.

/// The version of the curated lists below. Bump it whenever an entry is added or removed.
pub const LOGS_REFUSED_VERSION: u32 = 1;

/// Banks, payment apps, wallets and brokers, on Android and iPhone.
pub const FINANCE_APPS: &[&str] = &[
    // Payment apps and wallets.
    "com.paypal.android.p2pmobile",
    "com.paypal.PPClient",
    "com.yourcompany.PPClient",
    "com.venmo",
    "net.kortina.labs.Venmo",
    "com.squareup.cash",
    "com.google.android.apps.walletnfcrel",
    "com.google.android.apps.nbu.paisa.user",
    "com.samsung.android.spay",
    "com.samsung.android.samsungpay.gear",
    "com.phonepe.app",
    "net.one97.paytm",
    "com.eg.android.AlipayGphone",
    "com.alipay.iphoneclient",
    "com.mercadopago.wallet",
    "com.klarna.android",
    "com.klarna.klarna",
    "com.zellepay.zelle",
    // Banks.
    "com.revolut.revolut",
    "de.number26.android",
    "de.number26.n26",
    "com.transferwise.android",
    "com.transferwise.Transferwise",
    "com.chase.sig.android",
    "com.chase",
    "com.infonow.bofa",
    "com.wf.wellsfargomobile",
    "com.citi.citimobile",
    "com.konylabs.capitalone",
    "com.usaa.mobile.android.usaa",
    "com.americanexpress.android.acctsvcs.us",
    "com.barclays.android.barclaysmobilebanking",
    "uk.co.hsbc.hsbcukmobilebanking",
    "com.grppl.android.shell.CMBlloydsTSB73",
    "co.uk.getmondo",
    "com.starlingbank.android",
    "com.ing.mobile",
    // Brokers and crypto exchanges.
    "com.coinbase.android",
    "com.vilcsak.bitcoin2",
    "com.binance.dev",
    "com.robinhood.android",
    "com.robinhood.release.Robinhood",
];

/// Password managers and authenticators, on Android and iPhone.
pub const PASSWORD_MANAGERS: &[&str] = &[
    "com.agilebits.onepassword*",
    "com.1password.*",
    "com.x8bit.bitwarden",
    "com.8bit.bitwarden",
    "com.lastpass.lpandroid",
    "com.lastpass.ilastpass",
    "keepass2android.*",
    "com.kunzisoft.keepass.*",
    "com.keepassium.*",
    "com.markmcguill.strongbox*",
    "org.keepassxc.*",
    "com.dashlane*",
    "com.callpod.android_apps.keeper",
    "io.enpass.app",
    "com.nordpass.android.app.password.manager",
    "proton.android.pass",
    "com.google.android.apps.authenticator2",
    "com.google.Authenticator",
    "com.azure.authenticator",
];

/// The phone's own apps that a package flag may not mark as such (the dialer, Settings): their
/// logs mix in everyone's. Every `com.apple.*` bundle is one of the iPhone's own.
pub const PHONE_APPS: &[&str] = &[
    "android",
    "com.android.*",
    "com.google.android.dialer",
    "com.google.android.gms",
    "com.samsung.android.dialer",
    "com.apple.*",
];

/// UI-automation helpers an agent's tooling installs: WebDriverAgent's runner and Appium's
/// UiAutomator2 server and settings app. They see every screen, so their logs are never read.
pub const UI_AUTOMATION_HELPERS: &[&str] = &[
    "*.xctrunner",
    "io.appium.uiautomator2.server",
    "io.appium.uiautomator2.server.test",
    "io.appium.settings",
];

/// Whether `id` matches `pattern`: exact, `prefix*`, `*suffix`, or `*` for every id.
///
/// Matching is case-sensitive, as package names and bundle ids are.
pub fn matches(pattern: &str, id: &str) -> bool {
    let pattern = pattern.trim();
    if pattern == "*" {
        return true;
    }
    match (pattern.strip_prefix('*'), pattern.strip_suffix('*')) {
        (Some(suffix), _) if !suffix.contains('*') => id.ends_with(suffix),
        (_, Some(prefix)) if !prefix.contains('*') => id.starts_with(prefix),
        _ => !pattern.is_empty() && pattern == id,
    }
}

/// Whether any pattern of `list` matches `id`.
pub fn any_matches<'a>(list: impl IntoIterator<Item = &'a str>, id: &str) -> bool {
    list.into_iter().any(|pattern| matches(pattern, id))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns_match_exact_prefix_and_suffix() {
        assert!(matches("com.venmo", "com.venmo"));
        assert!(!matches("com.venmo", "com.venmo2"));
        assert!(matches(
            "keepass2android.*",
            "keepass2android.keepass2android_nonet"
        ));
        assert!(!matches("keepass2android.*", "keepass2android"));
        assert!(matches(
            "*.xctrunner",
            "com.facebook.WebDriverAgentRunner.xctrunner"
        ));
        assert!(!matches("*.xctrunner", "com.example.xctrunner.app"));
        assert!(matches("*", "anything"));
        assert!(!matches("", ""));
        assert!(!matches("a*b*", "ab"));
    }

    #[test]
    fn the_lists_hold_the_named_examples() {
        for id in [
            "com.agilebits.onepassword",
            "com.1password.1password",
            "com.x8bit.bitwarden",
            "com.8bit.bitwarden",
            "com.lastpass.lpandroid",
            "keepass2android.keepass2android",
            "com.kunzisoft.keepass.libre",
        ] {
            assert!(any_matches(PASSWORD_MANAGERS.iter().copied(), id), "{id}");
        }
        for id in [
            "com.paypal.android.p2pmobile",
            "com.squareup.cash",
            "com.chase.sig.android",
            "com.revolut.revolut",
        ] {
            assert!(any_matches(FINANCE_APPS.iter().copied(), id), "{id}");
        }
        for id in [
            "dev.phonelogs.crashtest",
            "com.example.store",
            "com.whatsapp",
        ] {
            assert!(!any_matches(FINANCE_APPS.iter().copied(), id), "{id}");
            assert!(!any_matches(PASSWORD_MANAGERS.iter().copied(), id), "{id}");
            assert!(!any_matches(PHONE_APPS.iter().copied(), id), "{id}");
            assert!(
                !any_matches(UI_AUTOMATION_HELPERS.iter().copied(), id),
                "{id}"
            );
        }
    }

    #[test]
    fn every_entry_is_a_valid_pattern_and_appears_once() {
        let mut seen = std::collections::HashSet::new();
        for list in [
            FINANCE_APPS,
            PASSWORD_MANAGERS,
            PHONE_APPS,
            UI_AUTOMATION_HELPERS,
        ] {
            for entry in list {
                let bare = entry.trim_matches('*');
                assert!(!bare.is_empty(), "{entry}");
                assert!(
                    phonelogs_driver::AppId::parse(bare).is_ok(),
                    "{entry} cannot name an app"
                );
                assert!(
                    entry.matches('*').count() <= 1,
                    "{entry} has more than one *"
                );
                assert!(seen.insert(*entry), "{entry} appears twice");
            }
        }
    }

    /// FNV-1a over every entry, so that a change to the lists without a new version fails here.
    fn fingerprint() -> u64 {
        let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
        for list in [
            FINANCE_APPS,
            PASSWORD_MANAGERS,
            PHONE_APPS,
            UI_AUTOMATION_HELPERS,
        ] {
            for byte in list.join("\n").bytes().chain([0u8]) {
                hash ^= u64::from(byte);
                hash = hash.wrapping_mul(0x0100_0000_01b3);
            }
        }
        hash
    }

    #[test]
    fn the_lists_change_only_with_their_version() {
        // When this fails, you changed a list: bump LOGS_REFUSED_VERSION and record the new
        // fingerprint for it here.
        let known: &[(u32, u64)] = &[(1, 0x541c_9f9a_16f9_e2be)];
        let current = fingerprint();
        assert_eq!(
            known
                .iter()
                .find(|(version, _)| *version == LOGS_REFUSED_VERSION)
                .map(|(_, f)| *f),
            Some(current),
            "lists changed: version {LOGS_REFUSED_VERSION}, fingerprint {current:#x}"
        );
    }
}
