/** The user settings pages, in the order the user menu lists them. */
export const SETTINGS_PAGES = {
  profile: { href: '/-/user_settings/profile', label: 'Profile' },
  tokens: { href: '/-/user_settings/personal_access_tokens', label: 'Access tokens' },
  applications: { href: '/-/user_settings/applications', label: 'Applications' },
  notifications: { href: '/-/profile/notifications', label: 'Notifications' },
  password: { href: '/-/user_settings/password/edit', label: 'Password' },
} as const;

export type SettingsPage = keyof typeof SETTINGS_PAGES;

/** Tabs between the user settings pages (the account's own pages of every module). */
export function SettingsNav({ current }: { current: SettingsPage }) {
  return (
    <nav class="tabs" aria-label="User settings">
      {Object.entries(SETTINGS_PAGES).map(([name, page]) => (
        <a key={name} href={page.href} aria-current={name === current ? 'page' : undefined}>
          {page.label}
        </a>
      ))}
    </nav>
  );
}

/** The breadcrumb trail of a settings page. */
export const settingsCrumbs = (current: SettingsPage) => [
  { label: 'User settings', href: SETTINGS_PAGES.profile.href },
  { label: SETTINGS_PAGES[current].label },
];
