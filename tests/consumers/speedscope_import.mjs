// Runs speedscope's own importer (the npm package's browser bundle, in headless Chromium) on
// profiles and prints what it read as JSON: per file, per profile in it, its name, weight
// unit, total weight and every frame's total weight. One page load reads them all. The package ships no importer for node, only the
// page; the bundle is loaded unchanged but for one line that hands its import module to the
// page (found by the call speedscope's own command line makes: importProfileGroupFromBase64).
//
// node speedscope_import.mjs SPEEDSCOPE_DIR CHROMIUM WORK_DIR PROFILE...
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'

const [speedscope, chromium, work, ...files] = process.argv.slice(2)
const release = path.join(speedscope, 'dist', 'release')
const bundleName = fs.readdirSync(release).find(f => /^speedscope-.*\.js$/.test(f))
if (!bundleName) throw new Error(`no speedscope-*.js in ${release}`)
const bundle = fs.readFileSync(path.join(release, bundleName), 'utf8')
const importer = /async function \w+\(\w+,\w+\)\{return\(await (\w+)\)\.importProfileGroupFromBase64\(\w+,\w+\)\}/
const found = importer.exec(bundle)
if (!found) throw new Error(`speedscope ${bundleName}: its import module was not found (the bundle changed)`)
const at = found.index + found[0].length
fs.mkdirSync(work, { recursive: true })
fs.writeFileSync(path.join(work, 'speedscope.js'),
  bundle.slice(0, at) + `;window.memsnapImporter=${found[1]};` + bundle.slice(at))
const scripts = files.map((file, i) => {
  const data = fs.readFileSync(file).toString('base64')
  fs.writeFileSync(path.join(work, `profile${i}.js`),
    `(window.memsnapFiles=window.memsnapFiles||[]).push([${JSON.stringify(path.basename(file))},${JSON.stringify(data)}]);`)
  return `<script src="profile${i}.js"></script>`
})
fs.writeFileSync(path.join(work, 'read.js'), `
(async () => {
  const out = document.getElementById('memsnap-result')
  try {
    const m = await window.memsnapImporter
    const read = []
    for (const [name, data] of window.memsnapFiles || []) {
      const group = await m.importProfileGroupFromBase64(name, data)
      if (!group) throw new Error('speedscope could not import ' + name)
      const profiles = group.profiles.map(p => {
        const frames = []
        p.forEachFrame(f => frames.push([f.name, f.getTotalWeight()]))
        return { name: p.getName(), unit: p.getWeightUnit(), total: p.getTotalWeight(), frames }
      })
      read.push({ file: name, profiles })
    }
    out.textContent = 'MEMSNAP-RESULT' + JSON.stringify({ files: read }) + 'MEMSNAP-END'
  } catch (e) {
    out.textContent = 'MEMSNAP-RESULT' + JSON.stringify({ error: String(e) }) + 'MEMSNAP-END'
  }
})()`)
fs.writeFileSync(path.join(work, 'index.html'),
  '<!DOCTYPE html><html><head><meta charset="UTF-8"></head><body><pre id="memsnap-result"></pre>' +
  '<script src="speedscope.js"></script>' + scripts.join('') + '<script src="read.js"></script></body></html>')
const dom = execFileSync(chromium, ['--headless=new', '--no-sandbox', '--disable-gpu', '--no-first-run',
  '--disable-extensions', '--disable-background-networking', '--virtual-time-budget=20000',
  '--allow-file-access-from-files', '--dump-dom', 'file://' + path.join(work, 'index.html')],
  { encoding: 'utf8', maxBuffer: 1 << 30, timeout: 120000, stdio: ['ignore', 'pipe', 'ignore'] })
const result = /MEMSNAP-RESULT(.*)MEMSNAP-END/s.exec(dom)
if (!result) throw new Error('the page wrote no result')
const text = result[1].replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&amp;/g, '&')
const parsed = JSON.parse(text)
if (parsed.error) throw new Error(parsed.error)
process.stdout.write(JSON.stringify(parsed) + '\n')
