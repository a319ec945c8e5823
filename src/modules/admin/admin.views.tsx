import type { ComponentChildren } from 'preact';
import { Layout, type Crumb, type PageState } from '../../web/index.js';

export type AdminSection = 'overview' | 'users' | 'applications' | 'storages';

const SECTIONS: { id: AdminSection; label: string; href: string }[] = [
  { id: 'overview', label: 'Overview', href: '/admin' },
  { id: 'users', label: 'Users', href: '/admin/users' },
  { id: 'applications', label: 'Applications', href: '/admin/applications' },
  { id: 'storages', label: 'Repository storages', href: '/admin/storages' },
];

/** The admin area's frame: the layout with the area's own tabs and a breadcrumb from Admin. */
export function AdminLayout(props: {
  title: string;
  page: PageState;
  section: AdminSection;
  crumbs?: Crumb[];
  children: ComponentChildren;
}) {
  const crumbs: Crumb[] = [{ label: 'Admin', href: '/admin' }, ...(props.crumbs ?? [{ label: props.title }])];
  return (
    <Layout title={`${props.title} · Admin`} page={props.page} crumbs={crumbs}>
      <nav class="tabs" aria-label="Admin area">
        {SECTIONS.map((section) => (
          <a key={section.id} href={section.href} aria-current={section.id === props.section ? 'page' : undefined}>
            {section.label}
          </a>
        ))}
      </nav>
      {props.children}
    </Layout>
  );
}

export const formatTime = (millis: number | null | undefined): string =>
  millis === null || millis === undefined ? '—' : new Date(millis).toISOString().replace('T', ' ').slice(0, 16) + ' UTC';

/** The admin area's frame for the OAuth module's instance-wide application pages. */
export const applicationsFrame = ({
  title,
  page,
  crumbs,
  children,
}: {
  title: string;
  page: PageState;
  crumbs: Crumb[];
  children: ComponentChildren;
}) => (
  <AdminLayout title={title} page={page} section="applications" crumbs={crumbs}>
    {children}
  </AdminLayout>
);
